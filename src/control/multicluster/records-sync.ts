// Publishing the gateway daemon's records (its /records JSON: endpoint, gateway, connections)
// as Endpoint and Gateway objects: in the cluster's store and, for the Endpoint, on the
// broker; remote clusters' Endpoints are copied from the broker into the cluster, so that
// `strait show endpoints` lists local and remote ones, as Submariner does.
import { type Clock, systemClock } from '../../base/clock/index.js';
import type { KubeObject, ResourceStore } from '../store/index.js';
import { BROKER_NAMESPACE, OPERATOR_NAMESPACE } from './names.js';
import { readEndpoint } from './records.js';
import { ensureNamespace, K } from './store-util.js';

export interface GatewayRecords {
  endpoint: { clusterId: string; hostname: string; endpointIP: string; publicIP: string; cableDriver: string; subnets: string[] };
  gateway: { node: string; haStatus: string; summary: string };
  connections: Record<string, unknown>[];
}

const safe = (s: string) => s.toLowerCase().replace(/[^a-z0-9.-]/g, '-').replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '') || 'x';
const same = (a: KubeObject | undefined, b: KubeObject, part: 'spec' | 'status') => JSON.stringify(a?.[part]) === JSON.stringify(b[part]);

export async function publishGatewayRecords(local: ResourceStore, broker: ResourceStore | undefined, recs: GatewayRecords, version?: string): Promise<void> {
  const ep = recs.endpoint;
  const epName = safe(`${ep.clusterId}.${ep.hostname}`);
  const endpoint: KubeObject = {
    apiVersion: K.Endpoint.apiVersion, kind: 'Endpoint', metadata: { name: epName, namespace: OPERATOR_NAMESPACE },
    spec: { ...ep, subnets: [...ep.subnets] },
  };
  await ensureNamespace(local, OPERATOR_NAMESPACE);
  // HA: only the active gateway of a cluster has an Endpoint (a passive one removes its own)
  const passive = recs.gateway.haStatus === 'passive';
  if (passive) {
    if (await local.get(K.Endpoint, epName, OPERATOR_NAMESPACE)) await local.delete(K.Endpoint, epName, OPERATOR_NAMESPACE);
  } else if (!same(await local.get(K.Endpoint, epName, OPERATOR_NAMESPACE), endpoint, 'spec')) await local.apply(endpoint);
  const gwName = safe(recs.gateway.node);
  const status = { ...recs.gateway, connections: recs.connections, ...(version ? { version } : {}) };
  const existing = await local.get(K.Gateway, gwName, OPERATOR_NAMESPACE);
  if (JSON.stringify(existing?.status) !== JSON.stringify(status)) {
    const gw = existing ?? await local.apply({ apiVersion: K.Gateway.apiVersion, kind: 'Gateway', metadata: { name: gwName, namespace: OPERATOR_NAMESPACE } });
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
    for (const e of (await local.list(K.Endpoint, { namespace: OPERATOR_NAMESPACE })).items) {
      if (e.metadata.name !== epName && readEndpoint(e, ep.clusterId).cluster === ep.clusterId) await local.delete(K.Endpoint, e.metadata.name, OPERATOR_NAMESPACE);
    }
  }
  // remote clusters' endpoints into this cluster
  const remote = (await broker.list(K.Endpoint, { namespace: BROKER_NAMESPACE })).items.filter((e) => readEndpoint(e, ep.clusterId).cluster !== ep.clusterId);
  const keep = new Set<string>(passive ? [] : [epName]);
  for (const r of remote) {
    const copy: KubeObject = { apiVersion: K.Endpoint.apiVersion, kind: 'Endpoint', metadata: { name: r.metadata.name, namespace: OPERATOR_NAMESPACE }, spec: r.spec };
    keep.add(r.metadata.name);
    if (!same(await local.get(K.Endpoint, r.metadata.name, OPERATOR_NAMESPACE), copy, 'spec')) await local.apply(copy);
  }
  for (const e of (await local.list(K.Endpoint, { namespace: OPERATOR_NAMESPACE })).items) {
    if (!keep.has(e.metadata.name) && readEndpoint(e, ep.clusterId).cluster !== ep.clusterId) await local.delete(K.Endpoint, e.metadata.name, OPERATOR_NAMESPACE);
  }
}

/** Poll a gateway's records and publish them every `intervalMs` (default 1 s); errors are retried on the next tick. */
export function startRecordsPublisher(opts: {
  local: ResourceStore; broker?: ResourceStore; fetchRecords: () => Promise<GatewayRecords>; intervalMs?: number; version?: string; clock?: Clock;
  onError?: (err: unknown) => void;
}): { stop(): void } {
  const clock = opts.clock ?? systemClock;
  let stopped = false;
  let timer: { cancel(): void } | undefined;
  const tick = async () => {
    try {
      await publishGatewayRecords(opts.local, opts.broker, await opts.fetchRecords(), opts.version);
    } catch (err) {
      opts.onError?.(err);
    }
    if (!stopped) timer = clock.setTimeout(() => void tick(), opts.intervalMs ?? 1000);
  };
  void tick();
  return { stop: () => { stopped = true; timer?.cancel(); } };
}
