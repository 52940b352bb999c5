// Publishing the gateway daemon's records (its /records JSON: endpoint, gateway, connections)
// as Endpoint and Gateway objects: in the cluster's store and, for the Endpoint, on the
// broker; remote clusters' Endpoints are copied from the broker into the cluster, so that
// `strait show endpoints` lists local and remote ones, as Submariner does.
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { isStraitError } from '../../../base/errors/index.js';
import { Informer } from '../../../platform/controller/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { BROKER_NAMESPACE, OPERATOR_NAMESPACE } from './names.js';
import type { EndpointRecord } from '../../dataplane/gateway/index.js';
import { formatRttNs, readEndpoint, type EndpointRow, type GatewayRow, type PublishedConnection } from './records.js';
import { ensureNamespace, K } from './store-util.js';
import { publishSubmarinerGateways } from './submariner.js';
import { CounterRates } from './counter-rates.js';
import { BrokerLane } from './records-broker-lane.js';

/** A gateway's records (its /records JSON, or the gateway object itself in Kubernetes mode). */
export interface GatewayRecords {
  endpoint: Omit<EndpointRecord, 'type'>;
  gateway: GatewayRow;
  connections: PublishedConnection[];
}

/** The fields of strait's records that Submariner's CRDs lack (its API server drops them), as field paths of a Gateway. */
export const STRAIT_HEALTH_FIELDS = ['status.nodeLegs', 'status.connections[].reason', 'status.connections[].loss'] as const;

/** The passive gateway's own summary: nothing failed (subctl says the same for no connections). */
const NO_CONNECTIONS = 'There are no connections';

/**
 * The records as Submariner's CRDs define them (submariner.io/v1 EndpointSpec and
 * GatewayStatus: cluster_id, private_ip, backend, usingIP, latencyRTT, ...): every field
 * they require, and of the fields they do not know only strait's health of the data path
 * (STRAIT_HEALTH_FIELDS: a connection's reason and loss, the VXLAN legs), which strait's
 * CRDs declare; a real API server with Submariner's own CRDs takes them and drops those
 * (test/integration/submariner-crds-kubernetes.test.ts), and the reason stays as
 * statusMessage's prefix. A connection's
 * endpoint is the remote gateway's: its host name comes from the remote cluster's Endpoint
 * (`remoteHostnames`, by cluster ID), as Submariner's gateway copies it. What is not
 * healthy about a gateway (fenced, lost the lease) goes in statusFailure, which subctl
 * prints as the gateway's summary.
 */
export function submarinerShape(
  recs: GatewayRecords,
  version: string,
  remoteHostnames: ReadonlyMap<string, string> = new Map(),
): { endpoint: Record<string, unknown>; gateway: Record<string, unknown> } {
  const ep = recs.endpoint;
  const cable = (cluster: string, ip: string) => `strait-cable-${cluster}-${ip.replace(/[^0-9a-z]/gi, '-')}`;
  const endpoint = {
    cluster_id: ep.clusterId,
    cable_name: cable(ep.clusterId, ep.endpointIP),
    hostname: ep.hostname,
    subnets: [...ep.subnets],
    private_ip: ep.endpointIP,
    public_ip: ep.publicIP,
    nat_enabled: false,
    backend: ep.cableDriver,
  };
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const connections = recs.connections.map((c) => {
    const remote = str(c['remoteIP']);
    const cluster = str(c['cluster']);
    const nat = c['nat'] === 'yes';
    const status = str(c['status']);
    const reason = str(c['reason']);
    const message = str(c['statusMessage']);
    const loss = str(c['loss']);
    return {
      status: status === 'connected' || status === 'error' ? status : 'connecting',
      // the reason first: subctl shows statusMessage, and Submariner's CRD drops `reason`
      statusMessage: reason && !message.startsWith(`${reason}:`) ? `${reason}: ${message}` : message,
      ...(reason ? { reason } : {}),
      ...(loss ? { loss } : {}),
      endpoint: {
        cluster_id: cluster,
        cable_name: cable(cluster, remote),
        hostname: remoteHostnames.get(cluster) ?? '',
        subnets: Array.isArray(c['subnets']) ? c['subnets'].filter((x): x is string => typeof x === 'string') : [],
        private_ip: remote,
        public_ip: remote,
        nat_enabled: nat,
        backend: str(c['cableDriver']),
      },
      usingIP: remote,
      usingNAT: nat,
      ...(latencyRTT(c['latency']) ?? (str(c['rttAvg']) ? { latencyRTT: { average: str(c['rttAvg']) } } : {})),
    };
  });
  const g = recs.gateway;
  const statusFailure = g.haStatus === 'active' || g.summary === NO_CONNECTIONS ? '' : g.summary;
  const nodeLegs = (g.nodeLegs ?? []).map((l) => ({ address: l.address, status: l.status, message: l.message }));
  return {
    endpoint,
    gateway: { version, haStatus: g.haStatus, localEndpoint: endpoint, statusFailure, ...(nodeLegs.length > 0 ? { nodeLegs } : {}), connections },
  };
}

/** Submariner's LatencyRTTSpec (Go durations) from a gateway's latency in ms */
function latencyRTT(v: unknown): { latencyRTT: Record<string, string> } | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const l = v as Record<string, unknown>;
  const d = (k: string): string => (typeof l[k] === 'number' ? formatRttNs(Math.round((l[k] as number) * 1e6)) : '');
  return { latencyRTT: { last: d('lastMs'), min: d('minMs'), average: d('avgMs'), max: d('maxMs'), stdDev: d('stddevMs') } };
}

const safe = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '') || 'x';
/** JSON with sorted keys: the API server answers with its own key order */
const canon = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
const same = (a: KubeObject | undefined, b: KubeObject, part: 'spec' | 'status') => canon(a?.[part]) === canon(b[part]);

/** Host names of other clusters' gateways, from their Endpoints in `ns` (copied from the broker). */
async function remoteHostnames(local: ResourceStore, ns: string, clusterId: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of (await local.list(K.Endpoint, { namespace: ns })).items) {
    const r = readEndpoint(e, clusterId);
    if (r.type === 'remote' && r.hostname) out.set(r.cluster, r.hostname);
  }
  return out;
}

/**
 * `ns`: where the cluster's records live (the operator namespace, where Submariner's tools
 * read them). `shape` 'submariner': Submariner's field names only (a real API server with
 * the submariner.io CRDs), and the active gateway keeps the Submariner resource's
 * status.gateways equal to the Gateway records.
 */
export async function publishGatewayRecords(
  local: ResourceStore,
  broker: ResourceStore | undefined,
  recs: GatewayRecords,
  version?: string,
  ns = OPERATOR_NAMESPACE,
  shape: 'strait' | 'submariner' = 'strait',
): Promise<void> {
  const ep = recs.endpoint;
  const epName = safe(`${ep.clusterId}.${ep.hostname}`);
  const sub = shape === 'submariner' ? submarinerShape(recs, version ?? '', await remoteHostnames(local, ns, ep.clusterId)) : undefined;
  const endpoint: KubeObject = {
    apiVersion: K.Endpoint.apiVersion,
    kind: 'Endpoint',
    metadata: { name: epName, namespace: ns },
    spec: sub ? sub.endpoint : { ...ep, subnets: [...ep.subnets] },
  };
  // the world's store makes the namespace; on Kubernetes it exists (and the gateway may not read Namespaces)
  if (!sub) await ensureNamespace(local, ns).catch(() => undefined);
  // HA: only the active gateway of a cluster has an Endpoint (a passive one removes its own)
  const passive = recs.gateway.haStatus === 'passive';
  if (passive) {
    if (await local.get(K.Endpoint, epName, ns)) await local.delete(K.Endpoint, epName, ns);
  } else if (!same(await local.get(K.Endpoint, epName, ns), endpoint, 'spec')) await local.apply(endpoint);
  const gwName = safe(recs.gateway.node);
  const status = sub ? sub.gateway : { ...recs.gateway, connections: recs.connections, ...(version ? { version } : {}) };
  const gateway: KubeObject = { apiVersion: K.Gateway.apiVersion, kind: 'Gateway', metadata: { name: gwName, namespace: ns }, status };
  const existing = await local.get(K.Gateway, gwName, ns);
  if (!same(existing, gateway, 'status')) {
    // created with its status (Submariner's CRD requires one; where a status subresource drops it, it is written next)
    const gw = existing ?? (await local.apply(gateway));
    if (!same(gw, gateway, 'status')) await local.updateStatus({ ...gw, status, metadata: { ...gw.metadata, resourceVersion: undefined } });
  }
  if (sub && recs.gateway.haStatus === 'active') {
    const gws = (await local.list(K.Gateway, { namespace: ns })).items
      .filter((g) => (g.status as Record<string, unknown> | undefined)?.['localEndpoint'] !== undefined)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    await publishSubmarinerGateways(
      local,
      ns,
      gws.map((g) => g.status as Record<string, unknown>),
    );
  }
  if (broker) await publishEndpointOnBroker(local, broker, recs, ns, endpoint);
}

/** The gateway's Endpoint in strait's shape, as publishGatewayRecords writes it in the cluster's store. */
function endpointObject(recs: GatewayRecords, ns: string): KubeObject {
  const ep = recs.endpoint;
  return {
    apiVersion: K.Endpoint.apiVersion,
    kind: 'Endpoint',
    metadata: { name: safe(`${ep.clusterId}.${ep.hostname}`), namespace: ns },
    spec: { ...ep, subnets: [...ep.subnets] },
  };
}

/**
 * The broker's part of publishing (strait's shape): this cluster's Endpoint on the broker
 * (the active gateway's; a passive one removes its own), and the other clusters' Endpoints
 * copied into the cluster. The records publisher runs it beside its polls, never in their
 * way: a broker cut off does not hold back the cluster's own records.
 */
export async function publishEndpointOnBroker(
  local: ResourceStore,
  broker: ResourceStore,
  recs: GatewayRecords,
  ns = OPERATOR_NAMESPACE,
  endpoint: KubeObject = endpointObject(recs, ns),
): Promise<void> {
  const ep = recs.endpoint;
  const epName = endpoint.metadata.name;
  const passive = recs.gateway.haStatus === 'passive';
  const onBroker = { ...endpoint, metadata: { name: epName, namespace: BROKER_NAMESPACE } };
  if (passive && (await broker.get(K.Endpoint, epName, BROKER_NAMESPACE))) await broker.delete(K.Endpoint, epName, BROKER_NAMESPACE);
  if (recs.gateway.haStatus === 'active' && !same(await broker.get(K.Endpoint, epName, BROKER_NAMESPACE), onBroker, 'spec')) {
    await ensureNamespace(broker, BROKER_NAMESPACE);
    await broker.apply(onBroker);
    // HA: one Endpoint per cluster, the active gateway's; a former active one that is gone for good is dropped too
    for (const e of (await broker.list(K.Endpoint, { namespace: BROKER_NAMESPACE })).items) {
      if (e.metadata.name !== epName && readEndpoint(e, ep.clusterId).cluster === ep.clusterId)
        await broker.delete(K.Endpoint, e.metadata.name, BROKER_NAMESPACE);
    }
    for (const e of (await local.list(K.Endpoint, { namespace: ns })).items) {
      if (e.metadata.name !== epName && readEndpoint(e, ep.clusterId).cluster === ep.clusterId) await local.delete(K.Endpoint, e.metadata.name, ns);
    }
  }
  // remote clusters' endpoints into this cluster
  const remote = (await broker.list(K.Endpoint, { namespace: BROKER_NAMESPACE })).items.filter((e) => readEndpoint(e, ep.clusterId).cluster !== ep.clusterId);
  const keep = new Set<string>(passive ? [] : [epName]);
  for (const r of remote) {
    const copy: KubeObject = { apiVersion: K.Endpoint.apiVersion, kind: 'Endpoint', metadata: { name: r.metadata.name, namespace: ns }, spec: r.spec };
    keep.add(r.metadata.name);
    if (!same(await local.get(K.Endpoint, r.metadata.name, ns), copy, 'spec')) await local.apply(copy);
  }
  for (const e of (await local.list(K.Endpoint, { namespace: ns })).items) {
    if (!keep.has(e.metadata.name) && readEndpoint(e, ep.clusterId).cluster !== ep.clusterId) await local.delete(K.Endpoint, e.metadata.name, ns);
  }
}

/**
 * A core/v1 Event on the Gateway for each connection whose status changed since the last
 * publish: Warning ConnectionError with the reason and the gateway's message, Normal
 * ConnectionEstablished when it is connected again after one; best effort.
 */
async function connectionEvents(local: ResourceStore, recs: GatewayRecords, seen: Map<string, string>, ns: string): Promise<void> {
  for (const c of recs.connections) {
    const reason = typeof c.reason === 'string' ? c.reason : '';
    const text = `${c.status}${reason ? `: ${reason}` : ''}`;
    const before = seen.get(c.cluster);
    seen.set(c.cluster, text);
    const bad = c.status !== 'connected';
    if (before === text || (!bad && before === undefined)) continue;
    const message = bad
      ? `connection to ${c.cluster} is ${text}${typeof c.statusMessage === 'string' && c.statusMessage ? `: ${c.statusMessage}` : ''}`
      : `connection to ${c.cluster} is connected again${before ? ` (was ${before})` : ''}${c.rttAvg ? `, RTT avg. ${c.rttAvg}` : ''}`;
    await local
      .recordEvent({
        involvedObject: { apiVersion: K.Gateway.apiVersion, kind: 'Gateway', name: safe(recs.gateway.node), namespace: ns },
        type: bad ? 'Warning' : 'Normal',
        reason: bad ? 'ConnectionError' : 'ConnectionEstablished',
        message,
        source: 'strait-gateway',
      })
      .catch(() => undefined);
  }
}

/**
 * HA: the gateway `node` of cluster `clusterId` no longer holds the lease (the candidate
 * that took it over says so, or the gateway itself when it finds it lost it): its Gateway
 * record becomes `passive` with `summary` (statusFailure in Submariner's shape) and no connections, and its Endpoint is removed
 * (the new active gateway's publisher replaces it, on the broker too). False when there
 * is no record of it (nothing published yet).
 */
export async function markGatewayPassive(local: ResourceStore, o: { node: string; clusterId: string; summary: string; namespace?: string }): Promise<boolean> {
  const ns = o.namespace ?? OPERATOR_NAMESPACE;
  const epName = safe(`${o.clusterId}.${o.node}`);
  if (await local.get(K.Endpoint, epName, ns)) await local.delete(K.Endpoint, epName, ns);
  // compare-and-swap: a publisher writing at the same time wins, then this one looks again
  for (let attempt = 0; ; attempt++) {
    const gw = await local.get(K.Gateway, safe(o.node), ns);
    if (!gw) return false;
    const cur = (gw.status ?? {}) as Record<string, unknown>;
    if (cur['haStatus'] === 'passive') return true;
    try {
      // Submariner's shape (it has a localEndpoint) says it in statusFailure, which its CRD knows; strait's in summary
      const why = cur['localEndpoint'] !== undefined ? { statusFailure: o.summary } : { summary: o.summary };
      await local.updateStatus({ ...gw, status: { ...cur, haStatus: 'passive', ...why, connections: [] } });
      return true;
    } catch (err) {
      if (attempt >= 2 || !isStraitError(err) || err.code !== 'STRAIT_ERR_CONFLICT') throw err;
    }
  }
}

/** what a connection's counters and RTT say changes at every poll: not a change of the records */
const VOLATILE = new Set([
  'rttAvg',
  'rttAvgMs',
  'txBytes',
  'rxBytes',
  'txPackets',
  'rxPackets',
  'handshakes',
  'rekeys',
  'latencyRTT',
  'latency',
  'loss',
  'countersAt',
  'txBps',
  'rxBps',
  'rateWindowMs',
]);

/**
 * The records without what moves at every poll (traffic counters, RTT): two polls with the
 * same steady key publish the same state. Whether an RTT is known at all is kept.
 */
export function steadyRecordsKey(recs: GatewayRecords): string {
  const connections = recs.connections.map((c) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(c)) if (!VOLATILE.has(k)) out[k] = v;
    out['rttKnown'] = typeof c['rttAvg'] === 'string' ? c['rttAvg'] !== '' : c['rttAvg'] !== undefined;
    // loss in steps of 10 %, and none apart from some: a link that starts or stops losing probes
    // is published at the next poll (a stored "4%" never outlives the loss itself)
    if (typeof c['loss'] === 'string' && c['loss'] !== '') {
      const pct = parseFloat(c['loss']);
      out['lossStep'] = pct > 0 ? 1 + Math.round(pct / 10) : 0;
    }
    return out;
  });
  return canon({ endpoint: recs.endpoint, gateway: recs.gateway, connections });
}

/** What startRecordsPublisher polls, where it publishes, and how often. */
export interface RecordsPublisherOptions {
  local: ResourceStore;
  broker?: ResourceStore;
  fetchRecords: () => Promise<GatewayRecords>;
  /** between polls (default 1 s); a function is asked before every wait (e.g. faster until the first connected records) */
  intervalMs?: number | (() => number);
  /** counters and RTT are written at least this often (default RECORDS_REFRESH_MS, 10 s) */
  refreshMs?: number;
  /** an RTT that moved (RTT_MOVE) is written once this long has passed since the last write (default RTT_REFRESH_MS, 5 s) */
  rttRefreshMs?: number;
  version?: string;
  clock?: Clock;
  /** where the records live (default: the operator namespace, submariner-operator) */
  namespace?: string;
  /** 'submariner': Submariner's field names only (a real API server with the submariner.io CRDs) */
  shape?: 'strait' | 'submariner';
  onError?: (err: unknown) => void;
  /** after each poll whose records were all written (local store and broker) */
  onPublished?: (recs: GatewayRecords) => void;
  /** the broker's Endpoint records (every cluster's active gateway), after its list and each change */
  onBrokerEndpoints?: (endpoints: EndpointRow[]) => void;
}

/**
 * How fresh the RTT in the Gateway record is (docs/faults.md, "Surfaces"): written at least
 * every 10 s, and within 5 s of the last write when an average moved by more than 10 % and
 * more than 2 ms since it was written (a status or reason change is written at the next poll).
 */
export const RECORDS_REFRESH_MS = 10_000;
export const RTT_REFRESH_MS = 5000;
const RTT_MOVE = { ratio: 0.1, ms: 2 };

/** a connection's average RTT in ms, from its latency statistics or its rttAvgMs */
function avgRttMs(c: PublishedConnection): number | undefined {
  const l = c['latency'] as { avgMs?: unknown } | null | undefined;
  if (l && typeof l.avgMs === 'number') return l.avgMs;
  return typeof c['rttAvgMs'] === 'number' ? c['rttAvgMs'] : undefined;
}

function rememberRtt(written: Map<string, number>, conns: PublishedConnection[]): void {
  written.clear();
  for (const c of conns) {
    const rtt = avgRttMs(c);
    if (rtt !== undefined) written.set(String(c.cluster), rtt);
  }
}

/** whether some connection's average RTT moved by more than RTT_MOVE since `written` */
function rttMoved(conns: PublishedConnection[], written: ReadonlyMap<string, number>): boolean {
  for (const c of conns) {
    const now = avgRttMs(c);
    const before = written.get(String(c.cluster));
    if (now === undefined || before === undefined) continue;
    const d = Math.abs(now - before);
    if (d > RTT_MOVE.ms && d > RTT_MOVE.ratio * before) return true;
  }
  return false;
}

/**
 * The broker's Endpoint records, watched: `changed` after the list and each event, with a way to
 * read all of them (copied only when read: most publishers only mark their broker lane dirty).
 */
function watchBrokerEndpoints(broker: ResourceStore, clock: Clock, changed: (endpoints: () => KubeObject[]) => void): { stop(): void } {
  const byName = new Map<string, KubeObject>();
  return new Informer(
    broker,
    K.Endpoint,
    { namespace: BROKER_NAMESPACE },
    {
      onList: (items) => {
        byName.clear();
        for (const o of items) byName.set(o.metadata.name, o);
        changed(() => [...byName.values()]);
      },
      onEvent: (type, o) => {
        if (type === 'DELETED') byName.delete(o.metadata.name);
        else byName.set(o.metadata.name, o);
        changed(() => [...byName.values()]);
      },
    },
    { clock },
  ).start();
}

/** The broker's part of a publisher's records, when it has a broker. */
function brokerLaneOf(opts: RecordsPublisherOptions, ns: string): BrokerLane<GatewayRecords> | undefined {
  const broker = opts.broker;
  if (!broker) return undefined;
  return new BrokerLane<GatewayRecords>(
    (recs) =>
      opts.shape === 'submariner'
        ? publishGatewayRecords(opts.local, broker, recs, opts.version, ns, opts.shape)
        : publishEndpointOnBroker(opts.local, broker, recs, ns),
    (recs) => opts.onPublished?.(recs),
    (err) => opts.onError?.(err),
  );
}

/**
 * Poll a gateway's records every `intervalMs` (default 1 s) and publish them when they
 * changed: a poll whose records differ from the last published ones only in traffic
 * counters and RTT writes nothing (the store is not touched at all); those are refreshed
 * every `refreshMs` (default 10 s), and an RTT that moved after `rttRefreshMs` (5 s). The
 * broker's part (this cluster's Endpoint there, the other clusters' Endpoints copied in when
 * the broker's change, a watch) runs beside the polls, one at a time: a broker that does
 * not answer holds back neither the cluster's own records nor their Events. Errors are
 * retried on the next tick.
 */
export function startRecordsPublisher(opts: RecordsPublisherOptions): { stop(): Promise<void> } {
  const clock = opts.clock ?? systemClock;
  const refreshMs = opts.refreshMs ?? RECORDS_REFRESH_MS;
  const rttRefreshMs = opts.rttRefreshMs ?? RTT_REFRESH_MS;
  const ns = opts.namespace ?? OPERATOR_NAMESPACE;
  /** each connection's average RTT as last written */
  const writtenRtt = new Map<string, number>();
  let stopped = false;
  let timer: { cancel(): void } | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  /** the steady key of the records last published, and when */
  let lastKey: string | undefined;
  let lastAt = 0;
  /** each connection's status text last published (Events on changes) */
  const seen = new Map<string, string>();
  const lane = brokerLaneOf(opts, ns);
  const brokerEndpoints = opts.broker
    ? watchBrokerEndpoints(opts.broker, clock, (endpoints) => {
        if (lane) lane.dirty = true;
        if (opts.onBrokerEndpoints) opts.onBrokerEndpoints(endpoints().map((e) => readEndpoint(e, '')));
      })
    : undefined;
  const rates = new CounterRates();
  const tick = async () => {
    try {
      const recs = await opts.fetchRecords();
      const readAt = clock.now();
      const key = steadyRecordsKey(recs);
      // each connection's counters, read now: its first rate is published as soon as it is known
      const counted = recs.connections.filter((c) => typeof c.txBytes === 'number' && typeof c.rxBytes === 'number' && typeof c.cluster === 'string');
      let firstRate = false;
      for (const c of counted) firstRate = rates.observe(String(c.cluster), c.txBytes as number, c.rxBytes as number, readAt) || firstRate;
      rates.keep(new Set(counted.map((c) => String(c.cluster))));
      const age = clock.now() - lastAt;
      const local = key !== lastKey || firstRate || age >= refreshMs || (age >= rttRefreshMs && rttMoved(recs.connections, writtenRtt));
      if (local || lane?.wants(key)) {
        lastKey = undefined;
        // the counters with the time they were read, and the throughput since the last
        // publish over those times (docs/console.md: the console shows it as it is)
        for (const c of counted) {
          const r = rates.close(String(c.cluster), c.txBytes as number, c.rxBytes as number, readAt);
          Object.assign(c, { countersAt: new Date(readAt).toISOString() }, r ? { txBps: r.txBps, rxBps: r.rxBps, rateWindowMs: r.windowMs } : {});
        }
        if (local) {
          await publishGatewayRecords(opts.local, undefined, recs, opts.version, ns, opts.shape);
          lastAt = clock.now();
          rememberRtt(writtenRtt, recs.connections);
          await connectionEvents(opts.local, recs, seen, ns);
        }
        lastKey = key;
        if (lane?.wants(key)) lane.push(recs, key);
      }
      // all written: the cluster's store, and the broker's part of these records
      if (!lane || lane.current(key)) opts.onPublished?.(recs);
    } catch (err) {
      opts.onError?.(err);
    }
    const wait = typeof opts.intervalMs === 'function' ? opts.intervalMs() : (opts.intervalMs ?? 1000);
    if (!stopped)
      timer = clock.setTimeout(() => {
        inFlight = tick();
      }, wait);
  };
  inFlight = tick();
  // stop(): no tick starts any more; the promise settles when the one in flight (if any) has written
  return {
    stop: async () => {
      stopped = true;
      timer?.cancel();
      brokerEndpoints?.stop();
      await inFlight;
      await lane?.stop();
    },
  };
}
