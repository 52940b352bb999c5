// What `strait up` does for the cluster set: deploy the broker and join every cluster of the
// world. Returns the broker-info text (the caller writes broker-info.subm, mode 0600).
import type { ResourceStore } from '../../../platform/store/index.js';
import { deployBroker } from './broker.js';
import { encodeBrokerInfo, type BrokerInfo } from './broker-info.js';
import { joinCluster, type CableDriver } from './join.js';
import type { ClusterNetwork } from './network.js';

export interface BootstrapOptions {
  broker: ResourceStore;
  brokerURL: string;
  /** the cluster the broker is deployed on */
  brokerCluster: string;
  token?: string;
  clusters: { store: ResourceStore; network: ClusterNetwork }[];
  cableDriver?: CableDriver;
  natt?: boolean;
}

export async function bootstrapClusterSet(opts: BootstrapOptions): Promise<{ info: BrokerInfo; brokerInfoText: string }> {
  // every start hands out new credentials, the PSK too: every cluster of the set joins again below
  const info = await deployBroker(opts.broker, {
    brokerURL: opts.brokerURL,
    cluster: opts.brokerCluster,
    newPsk: true,
    ...(opts.token ? { token: opts.token } : {}),
  });
  for (const c of opts.clusters) {
    await joinCluster({
      broker: opts.broker,
      local: c.store,
      info,
      source: 'strait up',
      network: c.network,
      ...(opts.cableDriver ? { cableDriver: opts.cableDriver } : {}),
      ...(opts.natt === undefined ? {} : { natt: opts.natt }),
    });
  }
  return { info, brokerInfoText: encodeBrokerInfo(info) };
}
