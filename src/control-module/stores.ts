// The stores of the control module: the API server (Kubernetes mode), the local world's
// store API (every cluster of the world reachable as a sync destination), or an embedded
// store; and the stores its web console shows.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { IN_CLUSTER_SERVERS } from '../gitops/control/index.js';
import { connectStore, openEmbeddedStore, type KubernetesResourceStore, type ResourceStore } from '../platform/store/index.js';
import type { ControlConfig } from './args.js';
import { kubernetesConsoleStores, worldConsoleStores, type ConsoleStores } from './console.js';

export interface ControlStores {
  store: ResourceStore;
  /** where an Application's destination server syncs to (the local world: https://<cluster>) */
  destinations?: (server: string) => ResourceStore | undefined;
  console: ConsoleStores;
}

/** Destinations: the in-cluster addresses map to this cluster's store; https://<cluster> (or the bare name) to that cluster's. */
function worldDestinations(socketPath: string, token: string, own: string, store: ResourceStore): (server: string) => ResourceStore | undefined {
  const others = new Map<string, ResourceStore>();
  return (server: string) => {
    if (IN_CLUSTER_SERVERS.includes(server)) return store;
    const name = server.replace(/^https?:\/\//, '').replace(/[:/].*$/, '');
    if (!/^[a-z0-9][-a-z0-9]*$/.test(name) || name === 'broker') return undefined;
    if (name === own) return store;
    let s = others.get(name);
    if (!s) {
      s = connectStore({ socketPath, token, cluster: name });
      others.set(name, s);
    }
    return s;
  };
}

export async function openControlStores(cfg: ControlConfig, kube: KubernetesResourceStore | undefined, log: Logger): Promise<ControlStores> {
  if (kube) return { store: kube, console: await kubernetesConsoleStores(kube, log) };
  if (cfg.storeSocket) {
    const token = readFileSync(cfg.storeTokenFile ?? join(cfg.stateDir, 'store.token'), 'utf8').trim();
    const own = cfg.cluster ?? 'cluster-a';
    const store = connectStore({ socketPath: cfg.storeSocket, token, cluster: own });
    return {
      store,
      destinations: worldDestinations(cfg.storeSocket, token, own, store),
      console: await worldConsoleStores(cfg.storeSocket, token, own, store),
    };
  }
  const store = openEmbeddedStore({ dir: cfg.storeDir ?? join(cfg.stateDir, 'store') });
  return { store, console: { stores: new Map([[cfg.cluster ?? 'local', store]]), home: cfg.cluster ?? 'local', close: async () => undefined } };
}
