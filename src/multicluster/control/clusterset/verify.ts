// `strait verify`: service discovery and connectivity checks of one cluster, like
// `subctl verify`: every imported service must resolve, through the given clusterset DNS
// server, to what its EndpointSlices say; every connection of the cluster's active
// gateways must be `connected`.
import type { ResourceStore } from '../../../platform/store/index.js';
import { connectedClusters, readGateway } from './records.js';
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
      out.push({ check: 'connection', target: `${gateway.node} -> ${c.cluster}`, result: c.status === 'connected' ? 'pass' : 'fail', detail: `${c.status}${c.rttAvg ? `, RTT ${c.rttAvg}` : ''}` });
    }
  }
  const connected = connectedClusters(gws, clusterId);
  const imports = (await local.list(K.ServiceImport, {})).items;
  for (const imp of imports) {
    const ns = imp.metadata.namespace ?? 'default';
    const name = imp.metadata.name;
    const slices = (await local.list(K.EndpointSlice, { namespace: ns, labelSelector: `${LABEL_SERVICE_NAME}=${name},${LABEL_MANAGED_BY}=${MANAGED_BY}` })).items;
    const all = new Set<string>();
    for (const s of slices) {
      const cluster = s.metadata.labels?.[LABEL_SOURCE_CLUSTER] ?? '';
      const ips = ((s['endpoints'] as { addresses?: string[]; conditions?: { ready?: boolean } }[] | undefined) ?? [])
        .filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses ?? []).sort();
      const reachable = !connected || connected.has(cluster);
      if (reachable) for (const ip of ips) all.add(ip);
      const fqdn = `${cluster}.${name}.${ns}.svc.clusterset.local`;
      const got = await resolveA(fqdn).catch((err: unknown) => ({ rcode: -1, addresses: [String(err)] }));
      const ok = reachable ? got.rcode === 0 && JSON.stringify(got.addresses) === JSON.stringify(ips) : got.rcode === 0;
      out.push({ check: 'service-discovery', target: fqdn, result: ok ? 'pass' : 'fail', detail: `expected ${reachable ? ips.join(',') || '(none)' : '(cluster not connected)'}, got ${got.rcode === 0 ? got.addresses.join(',') || '(none)' : `rcode ${got.rcode}`}` });
    }
    const fqdn = `${name}.${ns}.svc.clusterset.local`;
    const got = await resolveA(fqdn).catch((err: unknown) => ({ rcode: -1, addresses: [String(err)] }));
    const ok = got.rcode === 0 && got.addresses.length > 0 && got.addresses.every((a) => all.has(a));
    out.push({ check: 'service-discovery', target: fqdn, result: ok ? 'pass' : 'fail', detail: `answer ${got.rcode === 0 ? got.addresses.join(',') || '(none)' : `rcode ${got.rcode}`} from ${[...all].sort().join(',') || '(no ready endpoint)'}` });
  }
  if (imports.length === 0) out.push({ check: 'service-discovery', target: '(no imported services)', result: 'pass', detail: 'nothing is exported to this cluster' });
  return out;
}
