// The local authenticated store API: serveStores (server, in the process holding the
// embedded stores) and connectStore / connectStoreFromFiles (clients in every other process).
export {
  serveStores,
  createStoreApi,
  STORE_ROUTES,
  WRITE_VERBS,
  type StoreServerOptions,
  type StoreApi,
  type StoreApiOptions,
  type StoreOp,
  type StoreVerb,
} from './server.js';
export { parseStreamWatches, MAX_STREAM_WATCHES, type StreamWatch } from './stream.js';
export { API_PREFIX, STREAM_PATH } from './protocol.js';
export { connectStore, connectStoreFromFiles, listStoreClusters, type StoreClientOptions, type StoreClientFileOptions } from './client.js';
