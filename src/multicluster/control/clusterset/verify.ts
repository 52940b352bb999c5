// `strait verify`: service discovery and connectivity checks of one cluster, like
// `subctl verify`: every imported service must resolve, through the given clusterset DNS
// server, to what its EndpointSlices say; every connection of the cluster's active
// gateways must be `connected`.
import { formatRtt } from '../../../base/units/index.js';
import { isStraitError } from '../../../base/errors/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { describeBroker } from './broker.js';
import { getCondition, type Condition } from './conditions.js';
import { listJoinedClusters, readJoin } from './join.js';
import { connectedClusters, readGateway } from './records.js';
import { LABEL_MIRROR } from './endpointslice-mirror.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER, MANAGED_BY } from './names.js';
import { K } from './store-util.js';

export interface VerifyCheck {
  check: string;
  target: string;
  result: 'pass' | 'fail';
  detail: string;
}

/** Resolve a name to its A addresses (sorted) and rcode; supplied by the caller (UDP to the DNS server). */
export type ResolveA = (name: string) => Promise<{ rcode: number; addresses: string[] }>;

export async function verifyCluster(local: ResourceStore, clusterId: string, resolveA: ResolveA): Promise<VerifyCheck[]> {
  const out: VerifyCheck[] = [];
  const gws = (await local.list(K.Gateway, {})).items;
  for (const g of gws) {
    const { gateway, connections } = readGateway(g);
    if (gateway.haStatus !== 'active') continue;
    for (const c of connections) {
      out.push({
        check: 'connection',
        target: `${gateway.node} -> ${c.cluster}`,
        result: c.status === 'connected' ? 'pass' : 'fail',
        detail: `${c.status}${c.rttAvg ? `, RTT ${formatRtt(c.rttAvg)}` : ''}`,
      });
    }
  }
  const connected = connectedClusters(gws, clusterId);
  const imports = (await local.list(K.ServiceImport, {})).items;
  for (const imp of imports) {
    const ns = imp.metadata.namespace ?? 'default';
    const name = imp.metadata.name;
    const slices = (await local.list(K.EndpointSlice, { namespace: ns, labelSelector: `${LABEL_SERVICE_NAME}=${name},${LABEL_MANAGED_BY}=${MANAGED_BY}` }))
      .items;
    const all = new Set<string>();
    for (const s of slices) {
      // a mirror of this cluster's own slices behind its clusterset IP is no cluster's MCS slice
      if (s.metadata.labels?.[LABEL_MIRROR] === 'true') continue;
      const cluster = s.metadata.labels?.[LABEL_SOURCE_CLUSTER] ?? '';
      const ips = ((s['endpoints'] as { addresses?: string[]; conditions?: { ready?: boolean } }[] | undefined) ?? [])
        .filter((e) => e.conditions?.ready !== false)
        .flatMap((e) => e.addresses ?? [])
        .sort();
      const reachable = !connected || connected.has(cluster);
      if (reachable) for (const ip of ips) all.add(ip);
      const fqdn = `${cluster}.${name}.${ns}.svc.clusterset.local`;
      const got = await resolveA(fqdn).catch((err: unknown) => ({ rcode: -1, addresses: [String(err)] }));
      const ok = reachable ? got.rcode === 0 && JSON.stringify(got.addresses) === JSON.stringify(ips) : got.rcode === 0;
      out.push({
        check: 'service-discovery',
        target: fqdn,
        result: ok ? 'pass' : 'fail',
        detail: `expected ${reachable ? ips.join(',') || '(none)' : '(cluster not connected)'}, got ${got.rcode === 0 ? got.addresses.join(',') || '(none)' : `rcode ${got.rcode}`}`,
      });
    }
    const fqdn = `${name}.${ns}.svc.clusterset.local`;
    const got = await resolveA(fqdn).catch((err: unknown) => ({ rcode: -1, addresses: [String(err)] }));
    const ok = got.rcode === 0 && got.addresses.length > 0 && got.addresses.every((a) => all.has(a));
    out.push({
      check: 'service-discovery',
      target: fqdn,
      result: ok ? 'pass' : 'fail',
      detail: `answer ${got.rcode === 0 ? got.addresses.join(',') || '(none)' : `rcode ${got.rcode}`} from ${[...all].sort().join(',') || '(no ready endpoint)'}`,
    });
  }
  if (imports.length === 0)
    out.push({ check: 'service-discovery', target: '(no imported services)', result: 'pass', detail: 'nothing is exported to this cluster' });
  return out;
}

/** One check of verifyRecords: 'connectivity' (join, broker, gateway, connections) or 'service-discovery' (exports). */
export interface RecordCheck {
  check: 'connectivity' | 'service-discovery';
  name: string;
  target: string;
  result: 'pass' | 'fail';
  detail: string;
}

const why = (err: unknown): string => (isStraitError(err) ? err.message : String(err));

/**
 * What can be verified of a joined cluster from its records alone (Kubernetes mode, where
 * strait has no pods of its own to send traffic from): the join, the broker reachable with
 * the join's credentials and holding this cluster, exactly one active gateway, a
 * `connected` connection (with its RTT) to every other joined cluster, and every
 * ServiceExport Valid=True. `openBroker` is asked only once the cluster has joined.
 */
export async function verifyRecords(
  local: ResourceStore,
  openBroker: () => Promise<ResourceStore | undefined>,
): Promise<{ clusterId: string; checks: RecordCheck[] }> {
  const out: RecordCheck[] = [];
  const add = (check: RecordCheck['check'], name: string, target: string, ok: boolean, detail: string) =>
    out.push({ check, name, target, result: ok ? 'pass' : 'fail', detail });
  const join = await readJoin(local);
  if (!join) {
    add('connectivity', 'joined', '(broker)', false, "the cluster has not joined a broker; run 'strait join broker-info.subm --kubeconfig ... --clusterid ID'");
    return { clusterId: '', checks: out };
  }
  const id = join.clusterId;
  add('connectivity', 'joined', join.brokerURL, true, `cluster ${id} joined at ${join.joinedAt || '(unknown time)'}`);
  let others: string[] = [];
  let broker: ResourceStore | undefined;
  try {
    broker = await openBroker();
    if (!broker) throw new Error('the join recorded no broker connection (Secret strait-broker-connection)');
    const b = await describeBroker(broker);
    const joined = await listJoinedClusters(broker);
    const here = joined.some((c) => c.clusterId === id);
    add(
      'connectivity',
      'broker',
      join.brokerURL,
      here,
      here
        ? `reachable with the join's token; components ${b.components.join(', ')}; clusters ${joined.map((c) => c.clusterId).join(', ')}`
        : `reachable, but it holds no Cluster record of ${id}; join again`,
    );
    others = joined.map((c) => c.clusterId).filter((c) => c !== id);
  } catch (err) {
    add('connectivity', 'broker', join.brokerURL, false, `not reachable with the join's credentials: ${why(err)}`);
  } finally {
    await broker?.close().catch(() => undefined);
  }
  const gws = (await local.list(K.Gateway, {})).items.map(readGateway);
  const active = gws.filter((g) => g.gateway.haStatus === 'active');
  add(
    'connectivity',
    'gateway active',
    active.map((g) => g.gateway.node).join(', ') || '(none)',
    active.length === 1,
    active.length === 1
      ? `gateway ${active[0]!.gateway.node} is active (${gws.length} Gateway record(s)): ${active[0]!.gateway.summary}`
      : active.length === 0
        ? `no gateway is active (${gws.length} Gateway record(s)); is a gateway running on a node labelled submariner.io/gateway=true?`
        : `${active.length} gateways say they are active; exactly one may be`,
  );
  const conns = active.flatMap((g) => g.connections.map((c) => ({ node: g.gateway.node, c })));
  for (const cluster of [...new Set([...others, ...conns.map((x) => x.c.cluster)])].sort()) {
    const found = conns.filter((x) => x.c.cluster === cluster);
    if (found.length === 0) add('connectivity', 'gateway connection', cluster, false, `the active gateway has no connection to ${cluster}`);
    for (const { node, c } of found) {
      add(
        'connectivity',
        'gateway connection',
        cluster,
        c.status === 'connected',
        `${node} -> ${c.remoteIP || '?'} (${c.cableDriver || '?'}): ${c.status}${c.rttAvg ? `, RTT ${formatRtt(c.rttAvg)}` : ''}`,
      );
    }
  }
  const exports = (await local.list(K.ServiceExport, {})).items;
  for (const se of exports) {
    const valid = getCondition(((se.status ?? {}) as { conditions?: Condition[] }).conditions, 'Valid');
    const name = `${se.metadata.namespace ?? 'default'}/${se.metadata.name}`;
    add(
      'service-discovery',
      'service export',
      name,
      valid?.status === 'True',
      valid ? `Valid=${valid.status} (${valid.reason}): ${valid.message}` : 'no Valid condition yet: is the control module running?',
    );
  }
  if (exports.length === 0) add('service-discovery', 'service export', '(none)', true, 'the cluster exports no service');
  return { clusterId: id, checks: out };
}
