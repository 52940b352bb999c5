// The web console of the control module (src/console): which stores it shows.
//   local world: every store the world's store API serves (each cluster's and "broker");
//   Kubernetes: this cluster's API server and, once the cluster has joined, its broker;
//   embedded store: that store alone.
import type { Logger } from 'pino';
import { createConsole } from '../console/server/index.js';
import type { ApiMount } from '../gitops/control/index.js';
import { openBrokerOfCluster, readJoin } from '../multicluster/control/clusterset/index.js';
import { connectStore, listStoreClusters, type ResourceStore } from '../platform/store/index.js';

export interface ConsoleStores {
  stores: Map<string, ResourceStore>;
  home: string;
  close(): Promise<void>;
}

export async function worldConsoleStores(socketPath: string, token: string, own: string, ownStore: ResourceStore): Promise<ConsoleStores> {
  const stores = new Map<string, ResourceStore>([[own, ownStore]]);
  for (const c of await listStoreClusters({ socketPath, token })) if (!stores.has(c)) stores.set(c, connectStore({ socketPath, token, cluster: c }));
  return {
    stores,
    home: own,
    async close() {
      for (const [name, s] of stores) if (name !== own) await s.close();
    },
  };
}

/** Kubernetes: this cluster as its join names it, and its broker once it has joined (checked every 10 s until then). */
export async function kubernetesConsoleStores(kube: ResourceStore, log: Logger): Promise<ConsoleStores> {
  const join = await readJoin(kube).catch(() => undefined);
  const home = join?.clusterId || 'in-cluster';
  const stores = new Map<string, ResourceStore>([[home, kube]]);
  let broker: ResourceStore | undefined;
  const findBroker = async (): Promise<void> => {
    try {
      broker = await openBrokerOfCluster(kube);
      if (broker) stores.set('broker', broker);
    } catch (err) {
      log.debug({ err: String(err) }, 'console: no broker yet');
    }
  };
  await findBroker();
  const timer = broker
    ? undefined
    : setInterval(() => {
        if (broker) clearInterval(timer);
        else void findBroker();
      }, 10_000);
  timer?.unref();
  return {
    stores,
    home,
    async close() {
      if (timer) clearInterval(timer);
      await broker?.close();
    },
  };
}

export function consoleMount(s: ConsoleStores, namespace: string, log: Logger): ApiMount {
  return createConsole({ stores: s.stores, home: s.home, namespace, log });
}
