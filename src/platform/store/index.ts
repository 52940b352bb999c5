export type {
  ApplyOptions,
  CoreEvent,
  KindRef,
  KubeObject,
  ListOptions,
  ObjectList,
  ObjectMeta,
  ResourceStore,
  Watch,
  WatchEvent,
  WatchEventType,
  WatchOptions,
} from './types.js';
export { kindRef } from './types.js';
export { openEmbeddedStore, type Admission, type EmbeddedStoreOptions } from './embedded/index.js';
export {
  serveStores,
  connectStore,
  connectStoreFromFiles,
  listStoreClusters,
  createStoreApi,
  STORE_ROUTES,
  WRITE_VERBS,
  STREAM_PATH,
  type StoreServerOptions,
  type StoreApi,
  type StoreApiOptions,
  type StoreOp,
  type StoreVerb,
  type StoreClientOptions,
  type StoreClientFileOptions,
} from './api/index.js';
export { parseSelector, matchesSelector, type Requirement } from './selector.js';
export { mergePatch } from './merge-patch.js';
export {
  openKubernetesStore,
  loadKubeConfig,
  buildCrds,
  type SpecSchemas,
  type KubernetesStoreOptions,
  type KubernetesResourceStore,
  type RawRequest,
  type ServerSideApplyOptions,
} from './kubernetes/index.js';
