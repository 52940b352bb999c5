// Table columns per kind for `strait get`, following kubectl's printers (and Argo CD,
// Istio, MCS, Submariner for their kinds). -o wide adds the wide columns.
import type { KubeObject } from '../../platform/store/index.js';
import { formatAge } from '../../platform/cli-kit/index.js';

type Cell = string | number | undefined;
interface Column {
  header: string;
  value(o: KubeObject): Cell;
  wide?: boolean;
}

const get = (o: unknown, ...path: string[]): unknown => {
  let cur = o;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
};
const s = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));
const count = (v: unknown): number => (typeof v === 'object' && v !== null ? Object.keys(v).length : 0);
const age: Column = { header: 'AGE', value: (o) => formatAge(o.metadata.creationTimestamp) };
const condition = (o: KubeObject, type: string): string | undefined => {
  const conds = get(o, 'status', 'conditions');
  if (!Array.isArray(conds)) return undefined;
  const c = conds.find((x) => get(x, 'type') === type);
  return s(get(c, 'status'));
};

function servicePorts(o: KubeObject): string | undefined {
  const ports = get(o, 'spec', 'ports');
  if (!Array.isArray(ports) || ports.length === 0) return undefined;
  return ports.map((p) => `${get(p, 'port')}${get(p, 'nodePort') ? `:${get(p, 'nodePort')}` : ''}/${get(p, 'protocol') ?? 'TCP'}`).join(',');
}

const COLUMNS: Record<string, Column[]> = {
  Pod: [
    {
      header: 'READY',
      value: (o) => {
        // as kubectl: ready containers of containerStatuses (an injected sidecar is one), else the spec's
        const cs = get(o, 'status', 'containerStatuses') as { ready?: boolean }[] | undefined;
        if (Array.isArray(cs) && cs.length) return `${cs.filter((c) => c.ready === true).length}/${cs.length}`;
        const n = (get(o, 'spec', 'containers') as unknown[] | undefined)?.length ?? 0;
        return `${get(o, 'status', 'phase') === 'Running' ? n : 0}/${n}`;
      },
    },
    { header: 'STATUS', value: (o) => s(get(o, 'status', 'phase')) ?? 'Pending' },
    {
      header: 'RESTARTS',
      value: (o) => {
        const cs = get(o, 'status', 'containerStatuses') as { restartCount?: number }[] | undefined;
        return Array.isArray(cs) ? cs.reduce((n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0), 0) : 0;
      },
    },
    age,
    { header: 'IP', value: (o) => s(get(o, 'status', 'podIP')), wide: true },
    { header: 'NODE', value: (o) => s(get(o, 'spec', 'nodeName')), wide: true },
  ],
  Service: [
    { header: 'TYPE', value: (o) => s(get(o, 'spec', 'type')) ?? 'ClusterIP' },
    { header: 'CLUSTER-IP', value: (o) => s(get(o, 'spec', 'clusterIP')) },
    { header: 'EXTERNAL-IP', value: (o) => s(get(o, 'spec', 'externalName')) },
    { header: 'PORT(S)', value: servicePorts },
    age,
    {
      header: 'SELECTOR',
      value: (o) =>
        Object.entries((get(o, 'spec', 'selector') ?? {}) as Record<string, string>)
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
      wide: true,
    },
  ],
  Deployment: [
    { header: 'READY', value: (o) => `${get(o, 'status', 'readyReplicas') ?? 0}/${get(o, 'spec', 'replicas') ?? 1}` },
    { header: 'UP-TO-DATE', value: (o) => s(get(o, 'status', 'updatedReplicas')) ?? '0' },
    { header: 'AVAILABLE', value: (o) => s(get(o, 'status', 'availableReplicas')) ?? '0' },
    age,
  ],
  ConfigMap: [{ header: 'DATA', value: (o) => count(o['data']) + count(o['binaryData']) }, age],
  Secret: [{ header: 'TYPE', value: (o) => s(o['type']) ?? 'Opaque' }, { header: 'DATA', value: (o) => count(o['data']) }, age],
  Namespace: [{ header: 'STATUS', value: (o) => s(get(o, 'status', 'phase')) ?? 'Active' }, age],
  Node: [
    { header: 'STATUS', value: (o) => (condition(o, 'Ready') === 'False' ? 'NotReady' : 'Ready') },
    {
      header: 'ROLES',
      value: (o) =>
        Object.keys(o.metadata.labels ?? {})
          .filter((k) => k.startsWith('node-role.kubernetes.io/'))
          .map((k) => k.slice(24))
          .join(',') || '<none>',
    },
    age,
    {
      header: 'INTERNAL-IP',
      value: (o) =>
        s(
          get(
            (get(o, 'status', 'addresses') as unknown[] | undefined)?.find((a) => get(a, 'type') === 'InternalIP'),
            'address',
          ),
        ),
      wide: true,
    },
  ],
  EndpointSlice: [
    { header: 'ADDRESSTYPE', value: (o) => s(o['addressType']) },
    { header: 'PORTS', value: (o) => (o['ports'] as unknown[] | undefined)?.map((p) => get(p, 'port')).join(',') },
    { header: 'ENDPOINTS', value: (o) => (o['endpoints'] as unknown[] | undefined)?.flatMap((e) => (get(e, 'addresses') as string[]) ?? []).join(',') },
    age,
  ],
  Lease: [{ header: 'HOLDER', value: (o) => s(get(o, 'spec', 'holderIdentity')) }, age],
  Event: [
    { header: 'LAST SEEN', value: (o) => formatAge(o['lastTimestamp']) },
    { header: 'TYPE', value: (o) => s(o['type']) },
    { header: 'REASON', value: (o) => s(o['reason']) },
    { header: 'OBJECT', value: (o) => `${String(get(o, 'involvedObject', 'kind')).toLowerCase()}/${s(get(o, 'involvedObject', 'name'))}` },
    { header: 'MESSAGE', value: (o) => s(o['message']) },
  ],
  AppProject: [
    { header: 'SIGNATURE KEYS', value: (o) => (get(o, 'spec', 'signatureKeys') as unknown[] | undefined)?.map((k) => get(k, 'keyID')).join(',') },
    age,
  ],
  Application: [
    { header: 'SYNC STATUS', value: (o) => s(get(o, 'status', 'sync', 'status')) ?? 'Unknown' },
    { header: 'HEALTH STATUS', value: (o) => s(get(o, 'status', 'health', 'status')) ?? 'Unknown' },
    { header: 'REVISION', value: (o) => s(get(o, 'status', 'sync', 'revision'))?.slice(0, 7), wide: true },
    { header: 'PROJECT', value: (o) => s(get(o, 'spec', 'project')), wide: true },
  ],
  ServiceMeshControlPlane: [
    { header: 'VERSION', value: (o) => s(get(o, 'spec', 'version')) },
    { header: 'DATAPLANE MTLS', value: (o) => s(get(o, 'spec', 'security', 'dataPlane', 'mtls')) ?? 'false' },
    { header: 'AUTOMTLS', value: (o) => s(get(o, 'spec', 'security', 'dataPlane', 'automtls')) ?? 'false' },
    age,
  ],
  ServiceMeshMemberRoll: [{ header: 'MEMBERS', value: (o) => (get(o, 'spec', 'members') as string[] | undefined)?.join(',') }, age],
  PeerAuthentication: [{ header: 'MODE', value: (o) => s(get(o, 'spec', 'mtls', 'mode')) ?? 'UNSET' }, age],
  DestinationRule: [
    { header: 'HOST', value: (o) => s(get(o, 'spec', 'host')) },
    { header: 'TLS MODE', value: (o) => s(get(o, 'spec', 'trafficPolicy', 'tls', 'mode')) },
    age,
  ],
  MeshTrafficObservation: [
    { header: 'MODE', value: (o) => s(get(o, 'status', 'inbound', 'mode')) },
    { header: 'FLOWS', value: (o) => s(get(o, 'status', 'summary', 'flows')) ?? '0' },
    { header: 'MTLS', value: (o) => s(get(o, 'status', 'summary', 'mtls')) ?? '0' },
    { header: 'PLAINTEXT', value: (o) => s(get(o, 'status', 'summary', 'plaintext')) ?? '0' },
    { header: 'RESET', value: (o) => s(get(o, 'status', 'summary', 'reset')) ?? '0' },
    { header: 'STRICT WOULD RESET', value: (o) => s(get(o, 'status', 'summary', 'strictWouldReset')) ?? '0' },
    { header: 'DEPLOYMENT', value: (o) => s(get(o, 'spec', 'deployment')), wide: true },
    age,
  ],
  ServiceExport: [{ header: 'VALID', value: (o) => condition(o, 'Valid') }, age],
  ServiceImport: [
    { header: 'TYPE', value: (o) => s(get(o, 'spec', 'type')) },
    { header: 'IP', value: (o) => (get(o, 'spec', 'ips') as string[] | undefined)?.join(',') },
    age,
  ],
  Cluster: [
    { header: 'CLUSTER ID', value: (o) => s(get(o, 'spec', 'cluster_id')) },
    { header: 'SERVICE CIDRS', value: (o) => (get(o, 'spec', 'service_cidr') as string[] | undefined)?.join(',') },
    { header: 'CLUSTER CIDRS', value: (o) => (get(o, 'spec', 'cluster_cidr') as string[] | undefined)?.join(',') },
    age,
  ],
  Endpoint: [
    { header: 'CLUSTER', value: (o) => s(get(o, 'spec', 'cluster_id')) },
    { header: 'PRIVATE IP', value: (o) => s(get(o, 'spec', 'private_ip')) },
    { header: 'PUBLIC IP', value: (o) => s(get(o, 'spec', 'public_ip')) },
    { header: 'BACKEND', value: (o) => s(get(o, 'spec', 'backend')) },
    age,
  ],
  Gateway: [{ header: 'HA STATUS', value: (o) => s(get(o, 'status', 'haStatus')) }, { header: 'SUMMARY', value: (o) => s(get(o, 'status', 'summary')) }, age],
};

/** Headers and rows for a list of objects of one kind. */
export function tableFor(kind: string, items: KubeObject[], opts: { wide: boolean; allNamespaces: boolean }): { headers: string[]; rows: Cell[][] } {
  const cols = (COLUMNS[kind] ?? [age]).filter((c) => opts.wide || !c.wide);
  const headers = [...(opts.allNamespaces ? ['NAMESPACE'] : []), 'NAME', ...cols.map((c) => c.header)];
  const rows = items.map((o) => [...(opts.allNamespaces ? [o.metadata.namespace] : []), o.metadata.name, ...cols.map((c) => c.value(o))]);
  return { headers, rows };
}
