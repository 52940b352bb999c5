// What `strait up` does on the first cluster's multicluster daemon: deploy the broker and join
// every cluster of the world, unless each already has a current join.
import { renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../../../base/log/index.js';
import { connectStore, type ResourceStore } from '../../../platform/store/index.js';
import { bootstrapClusterSet, openCurrentBroker, readJoinConnection } from '../clusterset/index.js';
import type { MulticlusterDaemonConfig } from './config.js';

/**
 * Whether every cluster of the bootstrap list has a current join (its broker connection
 * accepted by the broker, the broker's fingerprints of its token and PSK). A world that
 * restarts writes a new store token, so the joins of its previous run are stale.
 */
async function bootstrapCurrent(stores: ResourceStore[]): Promise<string | undefined> {
  for (const store of stores) {
    const conn = await readJoinConnection(store);
    if (!conn) return 'not joined yet';
    const r = await openCurrentBroker(conn);
    if ('stale' in r) return r.stale;
    await r.broker.close();
  }
  return undefined;
}

/**
 * A first start, or a restart (new store token): deploy the broker again (new PSK) and join
 * every cluster with this run's credentials; every daemon follows its new join.
 */
export async function bootstrapWorldJoins(
  cfg: MulticlusterDaemonConfig,
  b: NonNullable<MulticlusterDaemonConfig['bootstrap']>,
  local: ResourceStore,
  token: string,
  log: Logger,
): Promise<void> {
  const socketPath = cfg.store.socket;
  const brokerStore = connectStore({ socketPath, token, cluster: 'broker' });
  const others = b.clusters.map((c) => ({ c, store: c.clusterId === cfg.clusterId ? local : connectStore({ socketPath, token, cluster: c.clusterId }) }));
  try {
    const why = await bootstrapCurrent(others.map((o) => o.store));
    if (!why) return;
    const r = await bootstrapClusterSet({
      broker: brokerStore,
      brokerURL: `unix://${socketPath}#broker`,
      brokerCluster: b.brokerCluster,
      token,
      clusters: others.map(({ c, store }) => ({
        store,
        network: { clusterId: c.clusterId, networkPlugin: 'strait', clusterCIDRs: [c.clusterCIDR], serviceCIDRs: [c.serviceCIDR] },
      })),
    });
    writeFileSync(`${b.brokerInfoFile}.tmp`, r.brokerInfoText, { mode: 0o600 });
    renameSync(`${b.brokerInfoFile}.tmp`, b.brokerInfoFile);
    log.info({ file: b.brokerInfoFile, clusters: b.clusters.map((c) => c.clusterId), why }, 'broker deployed and clusters joined');
  } finally {
    await brokerStore.close();
    for (const o of others) if (o.store !== local) await o.store.close();
  }
}
