// The controllers' defaults of the one retry policy (src/base/backoff, where every layer
// can use it: the data plane may not import platform/controller).
import { backoffDelay as delay, type BackoffPolicy } from '../../base/backoff/index.js';
import { DEFAULT_BACKOFF } from '../store/index.js';

export { Backoff, type BackoffPolicy } from '../../base/backoff/index.js';

/** Re-list after a watch ended, retry a failed reconcile: 100 ms, 200 ms, ... 2 s (the store's informer's). */
export { DEFAULT_BACKOFF };

/** The delay before retry number `attempt` (1 = after the first failure). */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  return delay(attempt, policy);
}
