// Publishing the gateway daemon's records (its /records JSON: endpoint, gateway, connections)
// as Endpoint and Gateway objects: in the cluster's store and, for the Endpoint, on the
// broker; remote clusters' Endpoints are copied from the broker into the cluster, so that
// `strait show endpoints` lists local and remote ones, as Submariner does.
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { isStraitError } from '../../../base/errors/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { BROKER_NAMESPACE, OPERATOR_NAMESPACE } from './names.js';
import { readEndpoint } from './records.js';
import { ensureNamespace, K } from './store-util.js';

export interface GatewayRecords {
  endpoint: { clusterId: string; hostname: string; endpointIP: string; publicIP: string; cableDriver: string; subnets: string[] };
  gateway: { node: string; haStatus: string; summary: string };
  connections: Record<string, unknown>[];
}

/**
 * The same records in Submariner's JSON shape (cluster_id, private_ip, backend, usingIP,
 * latencyRTT, ...), which the submariner.io CRDs on a real API server validate and prune
 * to; strait's flat fields stay beside them for the world's store. readEndpoint and
 * readGateway read either shape.
 */
export function submarinerShape(recs: GatewayRecords): { endpoint: Record<string, unknown>; connections: Record<string, unknown>[] } {
  const ep = recs.endpoint;
  const cable = (cluster: string, ip: string) => `strait-cable-${cluster}-${ip.replace(/[^0-9a-z]/gi, '-')}`;
  const endpoint = {
    cluster_id: ep.clusterId, cable_name: cable(ep.clusterId, ep.endpointIP), hostname: ep.hostname, subnets: [...ep.subnets],
    private_ip: ep.endpointIP, public_ip: ep.publicIP, nat_enabled: false, backend: ep.cableDriver,
  };
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const connections = recs.connections.map((c) => {
    const remote = str(c['remoteIP']);
    const cluster = str(c['cluster']);
    return {
      status: str(c['status']) || 'connecting', statusMessage: str(c['statusMessage']),
      endpoint: {
        cluster_id: cluster, cable_name: cable(cluster, remote), hostname: cluster, subnets: Array.isArray(c['subnets']) ? c['subnets'] : [],
        private_ip: remote, public_ip: remote, backend: str(c['cableDriver']),
      },
      usingIP: remote, usingNAT: c['nat'] === 'yes',
      ...(str(c['rttAvg']) ? { latencyRTT: { average: str(c['rttAvg']) } } : {}),
      ...(typeof c['rxBytes'] === 'number' ? { bytesIn: c['rxBytes'] } : {}),
      ...(typeof c['txBytes'] === 'number' ? { bytesOut: c['txBytes'] } : {}),
    };
  });
  return { endpoint, connections };
}

const safe = (s: string) => s.toLowerCase().replace(/[^a-z0-9.-]/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '') || 'x';
const same = (a: KubeObject | undefined, b: KubeObject, part: 'spec' | 'status') => JSON.stringify(a?.[part]) === JSON.stringify(b[part]);

/**
 * `ns`: where the cluster's records live (the world: submariner-operator; Kubernetes
 * mode: the gateway pod's namespace).
 */
export async function publishGatewayRecords(local: ResourceStore, broker: ResourceStore | undefined, recs: GatewayRecords, version?: string, ns = OPERATOR_NAMESPACE, shape: 'strait' | 'submariner' = 'strait'): Promise<void> {
  const ep = recs.endpoint;
  const epName = safe(`${ep.clusterId}.${ep.hostname}`);
  const sub = shape === 'submariner' ? submarinerShape(recs) : undefined;
  const endpoint: KubeObject = {
    apiVersion: K.Endpoint.apiVersion, kind: 'Endpoint', metadata: { name: epName, namespace: ns },
    spec: sub ? sub.endpoint : { ...ep, subnets: [...ep.subnets] },
  };
  // the world's store makes the namespace; on Kubernetes it exists (and the gateway may not read Namespaces)
  if (ns === OPERATOR_NAMESPACE) await ensureNamespace(local, ns).catch(() => undefined);
  // HA: only the active gateway of a cluster has an Endpoint (a passive one removes its own)
  const passive = recs.gateway.haStatus === 'passive';
  if (passive) {
    if (await local.get(K.Endpoint, epName, ns)) await local.delete(K.Endpoint, epName, ns);
  } else if (!same(await local.get(K.Endpoint, epName, ns), endpoint, 'spec')) await local.apply(endpoint);
  const gwName = safe(recs.gateway.node);
  const status = sub
    ? { haStatus: recs.gateway.haStatus, summary: recs.gateway.summary, localEndpoint: sub.endpoint, connections: sub.connections, ...(version ? { version } : {}) }
    : { ...recs.gateway, connections: recs.connections, ...(version ? { version } : {}) };
  const existing = await local.get(K.Gateway, gwName, ns);
  if (JSON.stringify(existing?.status) !== JSON.stringify(status)) {
    const gw = existing ?? await local.apply({ apiVersion: K.Gateway.apiVersion, kind: 'Gateway', metadata: { name: gwName, namespace: ns } });
    await local.updateStatus({ ...gw, status, metadata: { ...gw.metadata, resourceVersion: undefined } });
  }
  if (!broker) return;
  const onBroker = { ...endpoint, metadata: { name: epName, namespace: BROKER_NAMESPACE } };
  if (passive && await broker.get(K.Endpoint, epName, BROKER_NAMESPACE)) await broker.delete(K.Endpoint, epName, BROKER_NAMESPACE);
  if (recs.gateway.haStatus === 'active' && !same(await broker.get(K.Endpoint, epName, BROKER_NAMESPACE), onBroker, 'spec')) {
    await ensureNamespace(broker, BROKER_NAMESPACE);
    await broker.apply(onBroker);
    // HA: one Endpoint per cluster, the active gateway's; a former active one that is gone for good is dropped too
    for (const e of (await broker.list(K.Endpoint, { namespace: BROKER_NAMESPACE })).items) {
      if (e.metadata.name !== epName && readEndpoint(e, ep.clusterId).cluster === ep.clusterId) await broker.delete(K.Endpoint, e.metadata.name, BROKER_NAMESPACE);
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
 * HA: the gateway `node` of cluster `clusterId` no longer holds the lease (the candidate
 * that took it over says so, or the gateway itself when it finds it lost it): its Gateway
 * record becomes `passive` with `summary` and no connections, and its Endpoint is removed
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
      await local.updateStatus({ ...gw, status: { ...cur, haStatus: 'passive', summary: o.summary, connections: [] } });
      return true;
    } catch (err) {
      if (attempt >= 2 || !isStraitError(err) || err.code !== 'STRAIT_ERR_CONFLICT') throw err;
    }
  }
}

/** Poll a gateway's records and publish them every `intervalMs` (default 1 s); errors are retried on the next tick. */
export function startRecordsPublisher(opts: {
  local: ResourceStore; broker?: ResourceStore; fetchRecords: () => Promise<GatewayRecords>;
  /** between polls (default 1 s); a function is asked before every wait (e.g. faster until the first connected records) */
  intervalMs?: number | (() => number);
  version?: string; clock?: Clock;
  /** where the records live (default submariner-operator) */
  namespace?: string;
  /** 'submariner': Submariner's field names only (a real API server with the submariner.io CRDs) */
  shape?: 'strait' | 'submariner';
  onError?: (err: unknown) => void;
  /** after each poll whose records were all written (local store and broker) */
  onPublished?: (recs: GatewayRecords) => void;
}): { stop(): Promise<void> } {
  const clock = opts.clock ?? systemClock;
  let stopped = false;
  let timer: { cancel(): void } | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const tick = async () => {
    try {
      const recs = await opts.fetchRecords();
      await publishGatewayRecords(opts.local, opts.broker, recs, opts.version, opts.namespace, opts.shape);
      opts.onPublished?.(recs);
    } catch (err) {
      opts.onError?.(err);
    }
    const wait = typeof opts.intervalMs === 'function' ? opts.intervalMs() : opts.intervalMs ?? 1000;
    if (!stopped) timer = clock.setTimeout(() => { inFlight = tick(); }, wait);
  };
  inFlight = tick();
  // stop(): no tick starts any more; the promise settles when the one in flight (if any) has written
  return { stop: () => { stopped = true; timer?.cancel(); return inFlight; } };
}
