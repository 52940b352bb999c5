// Gathering what `strait show` prints from a cluster's store (and its broker).
import {
  describeBroker,
  listJoinedClusters,
  MC_KINDS as K,
  networkOf,
  OPERATOR_NAMESPACE,
  readEndpoint,
  readGateway,
  readJoin,
  withRemoteGateways,
  type BrokerDescription,
  type ClusterNetwork,
  type Condition,
  type ConnectionRow,
} from '../control/clusterset/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { VERSION } from '../../platform/cli-kit/index.js';
import type { ClusterRow, ExportRow, ImportRow, ShowData, VersionRow } from './show-tables.js';

export const COMPONENTS = ['strait-gateway', 'strait-node-agent', 'strait-control'] as const;

/** The world's process names of each component (cluster-a.gateway.gateway, cluster-a.worker.node-agent, cluster-a.control). */
const WORLD_PROCESS: Record<(typeof COMPONENTS)[number], RegExp> = {
  'strait-gateway': /\.gateway$/,
  'strait-node-agent': /\.node-agent$/,
  'strait-control': /^[^.]+\.control$/,
};

/** The components a world runs for `cluster`: each with a ready process, at this install's version. */
export function worldComponents(components: readonly { name: string; ready?: boolean }[], cluster: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of COMPONENTS) {
    if (components.some((p) => p.ready && p.name.startsWith(`${cluster}.`) && WORLD_PROCESS[c].test(p.name))) out.set(c, VERSION);
  }
  return out;
}
/**
 * Kubernetes mode: the components running in the cluster, each with its image's tag as the
 * version, from the Running pods of deploy/'s workloads (label app.kubernetes.io/name). An
 * identity that may not list pods gets an empty RUNNING column, not an error.
 */
export async function kubeComponents(store: ResourceStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let pods: KubeObject[];
  try {
    pods = (await store.list(K.Pod, { labelSelector: `app.kubernetes.io/name in (${COMPONENTS.join(',')})` })).items;
  } catch {
    return out;
  }
  for (const p of pods) {
    const component = p.metadata.labels?.['app.kubernetes.io/name'] ?? '';
    if (!(COMPONENTS as readonly string[]).includes(component) || (p.status as { phase?: string } | undefined)?.phase !== 'Running') continue;
    const image = (p.spec as { containers?: { image?: string }[] } | undefined)?.containers?.[0]?.image ?? '';
    const tag = /:([^:/@]+)$/.exec(image)?.[1] ?? 'latest';
    out.set(component, tag);
  }
  return out;
}

const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/**
 * `running`: the components that run for this cluster and their versions (a running world's
 * ready processes); a Gateway record that reports its version overrides it. A component
 * neither reports is not running: its RUNNING column is empty.
 */
export async function collectShow(
  local: ResourceStore,
  broker: ResourceStore | undefined,
  cluster: string,
  running: ReadonlyMap<string, string> = new Map(),
): Promise<ShowData> {
  const join = await readJoin(local);
  const clusterId = join?.clusterId ?? cluster;
  const endpoints = (await local.list(K.Endpoint, {})).items
    .map((e) => readEndpoint(e, clusterId))
    .sort((a, b) => (a.type === b.type ? a.cluster.localeCompare(b.cluster) : a.type === 'local' ? -1 : 1));
  const gws = (await local.list(K.Gateway, {})).items.map(readGateway);
  const reported = new Map(running);
  for (const g of (await local.list(K.Gateway, {})).items) {
    const v = (g.status as { version?: string } | undefined)?.version;
    if (v) reported.set('strait-gateway', v);
  }
  const versions: VersionRow[] = COMPONENTS.map((component) => ({
    component,
    repository: process.env['STRAIT_IMAGE_REPOSITORY'] ?? 'localhost/strait',
    configured: VERSION,
    running: reported.get(component) ?? '',
    arch: GOARCH[process.arch] ?? process.arch,
  }));
  let brokers: BrokerDescription[] = [];
  if (broker) {
    try {
      brokers = [await describeBroker(broker)];
    } catch {
      brokers = [];
    }
  }
  const connections = withRemoteGateways(
    gws.flatMap((g) => g.connections),
    endpoints,
  ).sort((a, b) => a.cluster.localeCompare(b.cluster));
  return {
    cluster: clusterId,
    connections,
    endpoints,
    gateways: gws.map((g) => g.gateway).sort((a, b) => a.node.localeCompare(b.node)),
    ...(join ? { network: join.network } : {}),
    versions,
    brokers,
    clusters: await clusterRows(local, broker, clusterId, connections),
    exports: (await local.list(K.ServiceExport, {})).items.map(exportRow).sort(byName),
    imports: (await local.list(K.ServiceImport, {})).items.map(importRow).sort(byName),
  };
}

const byName = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

/** The broker's Cluster records (every joined cluster); the cluster's own when there is no broker to read. */
async function clusterRows(local: ResourceStore, broker: ResourceStore | undefined, clusterId: string, connections: ConnectionRow[]): Promise<ClusterRow[]> {
  let networks: ClusterNetwork[] | undefined;
  if (broker) networks = await listJoinedClusters(broker).catch(() => undefined);
  networks ??= (await local.list(K.Cluster, { namespace: OPERATOR_NAMESPACE })).items.map(networkOf);
  return networks
    .map((n) => ({
      ...n,
      connection: n.clusterId === clusterId ? 'local' : (connections.find((c) => c.cluster === n.clusterId)?.status ?? ''),
    }))
    .sort((a, b) => a.clusterId.localeCompare(b.clusterId));
}

function exportRow(o: KubeObject): ExportRow {
  const valid = ((o.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Valid');
  return {
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    valid: valid?.status ?? 'Unknown',
    reason: valid?.reason ?? '',
    message: valid?.message ?? '',
  };
}

function importRow(o: KubeObject): ImportRow {
  const spec = (o.spec ?? {}) as { type?: string; ips?: unknown; ports?: { port?: number; protocol?: string; name?: string }[] };
  const status = (o.status ?? {}) as { clusters?: { cluster?: string }[] };
  return {
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    type: spec.type ?? '',
    ips: Array.isArray(spec.ips) ? spec.ips.filter((x): x is string => typeof x === 'string') : [],
    ports: (spec.ports ?? []).map((p) => `${p.port ?? '?'}/${p.protocol ?? 'TCP'}`),
    clusters: (status.clusters ?? [])
      .map((c) => c.cluster ?? '')
      .filter(Boolean)
      .sort(),
  };
}
