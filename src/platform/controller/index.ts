// The controller kit: one informer (list + watch + re-list), one keyed work queue with
// backoff, one debounced reconcile loop, and the one backoff policy they share. Used by
// the GitOps controller, the mesh controller, the multicluster agents and the world.
export { Backoff, DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from './backoff.js';
export { Informer, eventHandlers, type InformerHandlers, type InformerOptions } from '../store/index.js';
export { KeyQueue, type KeyQueueOptions, type Requeue } from './key-queue.js';
export { DebouncedLoop, reconcileOnChange, type DebouncedLoopOptions, type ReconcileLoop, type WatchedKind } from './debounced-loop.js';
