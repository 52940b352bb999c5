// Gathering what `strait show` prints from a cluster's store (and its broker).
import {
  describeBroker, MC_KINDS as K, readEndpoint, readGateway, readJoin, withRemoteGateways, type BrokerDescription,
} from '../control/clusterset/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { VERSION } from '../../platform/cli-kit/index.js';
import type { ShowData, VersionRow } from './show-tables.js';

export const COMPONENTS = ['strait-gateway', 'strait-node-agent', 'strait-control'] as const;

/** The world's process names of each component (cluster-a.gateway.gateway, cluster-a.worker.node-agent, cluster-a.control). */
const WORLD_PROCESS: Record<(typeof COMPONENTS)[number], RegExp> = {
  'strait-gateway': /\.gateway$/, 'strait-node-agent': /\.node-agent$/, 'strait-control': /^[^.]+\.control$/,
};

/** The components a world runs for `cluster`: each with a ready process, at this install's version. */
export function worldComponents(components: readonly { name: string; ready?: boolean }[], cluster: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of COMPONENTS) {
    if (components.some((p) => p.ready && p.name.startsWith(`${cluster}.`) && WORLD_PROCESS[c].test(p.name))) out.set(c, VERSION);
  }
  return out;
}
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/**
 * `running`: the components that run for this cluster and their versions (a running world's
 * ready processes); a Gateway record that reports its version overrides it. A component
 * neither reports is not running: its RUNNING column is empty.
 */
export async function collectShow(local: ResourceStore, broker: ResourceStore | undefined, cluster: string,
  running: ReadonlyMap<string, string> = new Map()): Promise<ShowData> {
  const join = await readJoin(local);
  const clusterId = join?.clusterId ?? cluster;
  const endpoints = (await local.list(K.Endpoint, {})).items.map((e) => readEndpoint(e, clusterId))
    .sort((a, b) => (a.type === b.type ? a.cluster.localeCompare(b.cluster) : a.type === 'local' ? -1 : 1));
  const gws = (await local.list(K.Gateway, {})).items.map(readGateway);
  const reported = new Map(running);
  for (const g of (await local.list(K.Gateway, {})).items) {
    const v = (g.status as { version?: string } | undefined)?.version;
    if (v) reported.set('strait-gateway', v);
  }
  const versions: VersionRow[] = COMPONENTS.map((component) => ({
    component, repository: process.env['STRAIT_IMAGE_REPOSITORY'] ?? 'localhost/strait',
    configured: VERSION, running: reported.get(component) ?? '', arch: GOARCH[process.arch] ?? process.arch,
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

