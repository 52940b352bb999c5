// The local authenticated store API: serveStores (server, in the process holding the
// embedded stores) and connectStore / connectStoreFromFiles (clients in every other process).
export { serveStores, type StoreServerOptions } from './server.js';
export { connectStore, connectStoreFromFiles, type StoreClientOptions, type StoreClientFileOptions } from './client.js';
