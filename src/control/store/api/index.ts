// PLACEHOLDER: the local authenticated store API lands with the store work of issue 2.
import { E } from '../../../base/errors/index.js';
import type { ResourceStore } from '../types.js';

export interface StoreServerOptions {
  /** unix socket path the API listens on (reachable from every network namespace) */
  socketPath: string;
  /** bearer token clients must present */
  token: string;
  /** one store per cluster name, plus "broker" */
  stores: Map<string, ResourceStore>;
}

export async function serveStores(_opts: StoreServerOptions): Promise<{ close(): Promise<void> }> {
  throw E.internal('store API not built yet');
}

export interface StoreClientOptions {
  socketPath: string;
  token: string;
  /** which cluster's store ("cluster-a", "broker", ...) */
  cluster: string;
}

export function connectStore(_opts: StoreClientOptions): ResourceStore {
  throw E.internal('store API not built yet');
}
