// Reading the cluster-link records (Endpoint, Gateway with its connections, Cluster) for
// `strait show` and for DNS health. The gateway daemon publishes them; this reader accepts
// both strait's flat shape (clusterId, endpointIP, ... as the gateway's records have them)
// and Submariner's (cluster_id, private_ip, backend, latencyRTT, ...), so either source works.
import type { KubeObject } from '../../../platform/store/index.js';
import type { ConnectionRecord, EndpointRecord, GatewayRecord } from '../../dataplane/gateway/index.js';

/** An Endpoint read back: the gateway's Endpoint record, its cluster ID as `cluster`. */
export type EndpointRow = Omit<EndpointRecord, 'clusterId'> & { cluster: string };

/** The columns of a gateway's connection record that both shapes carry. */
type ConnectionColumns = 'cluster' | 'remoteIP' | 'nat' | 'cableDriver' | 'subnets' | 'rttAvg';

/** The reasons a gateway names (dataplane/tunnel/health.ts); Submariner's shape carries one as its statusMessage's prefix. */
const REASONS = ['psk-mismatch', 'no-handshake-answer', 'loss 100%', 'peer fenced', 'peer-dead'];

/** A connection read back: the gateway's connection record's columns, any status text. */
export type ConnectionRow = Pick<ConnectionRecord, ConnectionColumns> & {
  /** the remote gateway's host name (its Endpoint's), as subctl's GATEWAY column; '' when not known */
  gateway: string;
  status: string;
  /** why it is not connected (psk-mismatch, no-handshake-answer, loss 100%), '' when it is or not known */
  reason: string;
  statusMessage: string;
  /** probes lost in the gateway's health window ("0%", "30%"), '' when not known */
  loss: string;
};

/** A connection as a gateway publishes it (its /records JSON): the row, the record's other fields optional. */
export type PublishedConnection = Omit<ConnectionRow, 'reason' | 'statusMessage' | 'loss'> &
  Partial<Omit<ConnectionRecord, ConnectionColumns | 'gateway' | 'status'>>;

/** A Gateway read back: the gateway's record, any HA status text. */
export type GatewayRow = Omit<GatewayRecord, 'haStatus'> & { haStatus: string };

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (...vals: unknown[]): string => {
  for (const v of vals) if (typeof v === 'string' && v !== '') return v;
  for (const v of vals) if (typeof v === 'number') return String(v);
  return '';
};
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Go's time.Duration text, as subctl prints RTT: "1.234567ms". Input in nanoseconds or ms text. */
export function formatRttNs(ns: number): string {
  const ms = ns / 1e6;
  if (ms < 1) return `${Math.round(ns / 1000)}µs`;
  return `${ms.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}ms`;
}

export function readEndpoint(o: KubeObject, localCluster: string): EndpointRow {
  const s = { ...obj(o.status), ...obj(o.spec) };
  const cluster = str(s['clusterId'], s['cluster_id'], s['clusterID']);
  const declared = str(s['type']);
  return {
    cluster,
    hostname: str(s['hostname']),
    endpointIP: str(s['endpointIP'], s['private_ip'], s['privateIP']),
    publicIP: str(s['publicIP'], s['public_ip']),
    cableDriver: str(s['cableDriver'], s['backend']),
    subnets: strs(s['subnets']),
    // seen from the cluster that reads it: a record copied from another cluster says 'local' there
    type: localCluster ? (cluster === localCluster ? 'local' : 'remote') : declared === 'remote' ? 'remote' : 'local',
  };
}

function readConnection(c: Obj): ConnectionRow {
  const ep = obj(c['endpoint']);
  const rtt = obj(c['latencyRTT']);
  const natRaw = c['nat'] ?? c['usingNAT'];
  const avg = rtt['average'];
  const message = str(c['statusMessage']);
  const reason = str(c['reason']) || (REASONS.find((r) => message.startsWith(`${r}:`)) ?? '');
  return {
    // Submariner's shape: the remote endpoint's host name; strait's flat shape has none (its
    // `gateway` is the local gateway): the reader finds it from the remote cluster's Endpoint
    gateway: str(ep['hostname'], c['remoteHostname']),
    cluster: str(c['cluster'], ep['cluster_id'], ep['clusterId']),
    remoteIP: str(c['remoteIP'], c['usingIP'], ep['private_ip'], ep['endpointIP']),
    nat: natRaw === true || natRaw === 'yes' ? 'yes' : 'no',
    cableDriver: str(c['cableDriver'], ep['backend'], ep['cableDriver']),
    subnets: strs(c['subnets']).length > 0 ? strs(c['subnets']) : strs(ep['subnets']),
    status: str(c['status'], 'unknown'),
    reason,
    statusMessage: message,
    loss: str(c['loss']),
    rttAvg: str(c['rttAvg'], typeof avg === 'string' ? avg : undefined) || (typeof avg === 'number' ? formatRttNs(avg) : ''),
  };
}

/** The cluster a Gateway record names (Submariner's localEndpoint.cluster_id, strait's clusterId), or '' when none. */
export function gatewayClusterOf(o: KubeObject): string {
  const s = { ...obj(o.spec), ...obj(o.status) };
  const local = obj(s['localEndpoint']);
  return str(local['cluster_id'], s['clusterId'], s['cluster_id'], s['clusterID']);
}

export function readGateway(o: KubeObject): { gateway: GatewayRow; connections: ConnectionRow[] } {
  const s = { ...obj(o.spec), ...obj(o.status) };
  const local = obj(s['localEndpoint']);
  const node = str(s['node'], local['hostname'], o.metadata.name);
  const conns = (Array.isArray(s['connections']) ? s['connections'] : []).map((c) => readConnection(obj(c)));
  const up = conns.filter((c) => c.status === 'connected').length;
  // strait's records carry a summary; Submariner's a statusFailure, else the summary is subctl's
  const summary =
    str(s['summary'], s['statusFailure']) ||
    (conns.length === 0
      ? 'There are no connections'
      : up === conns.length
        ? `All connections (${conns.length}) are established`
        : `${up} connections out of ${conns.length} are established`);
  const legs = (Array.isArray(s['nodeLegs']) ? s['nodeLegs'] : [])
    .map((l) => obj(l))
    .map((l) => ({ address: str(l['address']), status: str(l['status']) === 'ok' ? ('ok' as const) : ('broken' as const), message: str(l['message']) }));
  return { gateway: { node, haStatus: str(s['haStatus'], 'unknown'), summary, ...(legs.length > 0 ? { nodeLegs: legs } : {}) }, connections: conns };
}

/** A connection's status as the tables print it: `connected`, `connected (loss 30%)`, `error: psk-mismatch`. */
export function statusText(c: Pick<ConnectionRow, 'status' | 'reason' | 'loss'>): string {
  const lossy = c.loss !== '' && c.loss !== '0%' && c.reason !== 'loss 100%';
  return `${c.status}${c.reason ? `: ${c.reason}` : ''}${lossy ? ` (loss ${c.loss})` : ''}`;
}

/** The connections' GATEWAY: the remote cluster's gateway host name from its Endpoint where the record has none. */
export function withRemoteGateways(connections: ConnectionRow[], endpoints: EndpointRow[]): ConnectionRow[] {
  const host = new Map(endpoints.filter((e) => e.type === 'remote' && e.hostname).map((e) => [e.cluster, e.hostname]));
  return connections.map((c) => (c.gateway ? c : { ...c, gateway: host.get(c.cluster) ?? '' }));
}

/** Clusters reachable now according to active gateways (undefined when no gateway record exists). */
export function connectedClusters(gateways: KubeObject[], localCluster: string): Set<string> | undefined {
  if (gateways.length === 0) return undefined;
  const out = new Set<string>([localCluster]);
  for (const g of gateways) {
    const { gateway, connections } = readGateway(g);
    if (gateway.haStatus !== 'active' && gateway.haStatus !== 'unknown') continue;
    for (const c of connections) if (c.status === 'connected' && c.cluster) out.add(c.cluster);
  }
  return out;
}
