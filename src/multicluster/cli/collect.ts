// Gathering what `strait show` prints from a cluster's store (and its broker).
import {
  describeBroker, MC_KINDS as K, readEndpoint, readGateway, readJoin, withRemoteGateways, type BrokerDescription,
} from '../control/clusterset/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { VERSION } from '../../platform/cli-kit/index.js';
import type { ShowData, VersionRow } from './show-tables.js';

export const COMPONENTS = ['strait-gateway', 'strait-node-agent', 'strait-control'] as const;
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

export async function collectShow(local: ResourceStore, broker: ResourceStore | undefined, cluster: string): Promise<ShowData> {
  const join = await readJoin(local);
  const clusterId = join?.clusterId ?? cluster;
  const endpoints = (await local.list(K.Endpoint, {})).items.map((e) => readEndpoint(e, clusterId))
    .sort((a, b) => (a.type === b.type ? a.cluster.localeCompare(b.cluster) : a.type === 'local' ? -1 : 1));
  const gws = (await local.list(K.Gateway, {})).items.map(readGateway);
  const running = new Map<string, string>();
  for (const g of (await local.list(K.Gateway, {})).items) {
    const v = (g.status as { version?: string } | undefined)?.version;
    if (v) running.set('strait-gateway', v);
  }
  const versions: VersionRow[] = COMPONENTS.map((component) => ({
    component, repository: process.env['STRAIT_IMAGE_REPOSITORY'] ?? 'localhost/strait',
    configured: VERSION, running: running.get(component) ?? VERSION, arch: GOARCH[process.arch] ?? process.arch,
  }));
  let brokers: BrokerDescription[] = [];
  if (broker) {
    try {
      brokers = [await describeBroker(broker)];
    } catch {
      brokers = [];
    }
  }
  return {
    cluster: clusterId,
    connections: withRemoteGateways(gws.flatMap((g) => g.connections), endpoints).sort((a, b) => a.cluster.localeCompare(b.cluster)),
    endpoints,
    gateways: gws.map((g) => g.gateway).sort((a, b) => a.node.localeCompare(b.node)),
    ...(join ? { network: join.network } : {}),
    versions,
    brokers,
  };
}

