// The clusterset IP of a ClusterSetIP ServiceImport, as Cilium's ClusterMesh MCS-API support
// and the mcs-api reference controllers allocate it: a "derived" Service in each importing
// cluster, `derived-<hash>` in the ServiceImport's namespace, owned by the ServiceImport, of
// type ClusterIP without a selector. The cluster allocates its ClusterIPs from its service
// CIDR (the API server; the local world's store admission), and the service proxy
// (kube-proxy; the world's node proxy) routes them to the EndpointSlices labelled
// `kubernetes.io/service-name: derived-<hash>`: the imported slices, one per exporting
// cluster, each listing that cluster's ClusterIP and the ports the import accepted from it.
// The ServiceImport's `spec.ips` / `ipFamilies` are then the derived Service's ClusterIPs and
// their families. Pure functions here; agent.ts writes the objects.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../platform/store/index.js';
import type { Aggregate, ServicePort } from './aggregate.js';
import { LABEL_SERVICE_NAME, MANAGED_BY } from './names.js';

/** On the ServiceImport: the name of its derived Service (the mcs-api controllers' annotation). */
export const ANN_DERIVED_SERVICE = 'multicluster.kubernetes.io/derived-service';
/** On the derived Service: who keeps it (the agent's cache selects by it). */
export const LABEL_APP_MANAGED_BY = 'app.kubernetes.io/managed-by';
/** On an imported slice of a ClusterSetIP import: the derived Service it belongs to (the label kube-proxy reads). */
export const LABEL_K8S_SERVICE_NAME = 'kubernetes.io/service-name';

const BASE32_HEX = '0123456789abcdefghijklmnopqrstuv';

/**
 * `derived-` and the first 10 characters of the lower-case, unpadded base32hex of
 * SHA-256("<namespace>/<name>"): the mcs-api reference controllers' and Cilium's name, so
 * either finds the other's derived Service.
 */
export function derivedServiceName(namespace: string, name: string): string {
  const digest = createHash('sha256').update(`${namespace}/${name}`).digest();
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const byte of digest) {
    acc = ((acc << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < 10) {
      out += BASE32_HEX[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length === 10) break;
  }
  return `derived-${out}`;
}

const same = (a: ServicePort, b: ServicePort): boolean => (a.name ?? '') === (b.name ?? '') && a.protocol === b.protocol && a.port === b.port;

/**
 * The ports the derived Service serves: the import's, except that a Service with more than
 * one port needs a name on each (the API server refuses it otherwise), so an unnamed port in
 * a union of several (two clusters' unnamed ports of different numbers) is left out.
 */
export function derivedPorts(ports: ServicePort[]): { ports: ServicePort[]; leftOut: ServicePort[] } {
  if (ports.length <= 1) return { ports: ports.map((p) => ({ ...p })), leftOut: [] };
  return { ports: ports.filter((p) => p.name).map((p) => ({ ...p })), leftOut: ports.filter((p) => !p.name) };
}

/**
 * The ports of one cluster's imported slice: those of its own that the import took (same
 * name, protocol and number). A port the import resolved another way (the same name with
 * another number, KEP-1645's oldest-wins) is not offered by this cluster behind the
 * clusterset IP, so the service proxy, which matches ports by name, never sends it there.
 */
export function acceptedPorts(clusterPorts: ServicePort[], importPorts: ServicePort[]): ServicePort[] {
  return clusterPorts.filter((p) => importPorts.some((q) => same(p, q))).map((p) => ({ ...p }));
}

export interface DerivedServiceInput {
  namespace: string;
  /** the ServiceImport's (= the exported Service's) name */
  name: string;
  /** the local ServiceImport's uid: the owner reference */
  importUid: string;
  importApiVersion: string;
  agg: Aggregate;
}

/** The derived Service of a ClusterSetIP import. No clusterIP: the cluster allocates it. */
export function derivedService(i: DerivedServiceInput): KubeObject {
  const p = i.agg.props;
  const families = (p.ipFamilies ?? ['IPv4']).filter((f) => f === 'IPv4' || f === 'IPv6');
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: derivedServiceName(i.namespace, i.name),
      namespace: i.namespace,
      labels: { [LABEL_SERVICE_NAME]: i.name, [LABEL_APP_MANAGED_BY]: MANAGED_BY },
      ownerReferences: [{ apiVersion: i.importApiVersion, kind: 'ServiceImport', name: i.name, uid: i.importUid, controller: true }],
    },
    spec: {
      type: 'ClusterIP',
      ports: derivedPorts(i.agg.ports).ports,
      // one clusterset IP per family the import has; a cluster that has one family gives one
      // (PreferDualStack), and the ServiceImport then lists what the cluster gave
      ...(families.length > 0 ? { ipFamilies: families, ipFamilyPolicy: families.length > 1 ? 'PreferDualStack' : 'SingleStack' } : {}),
      sessionAffinity: p.sessionAffinity ?? 'None',
      ...(p.sessionAffinity === 'ClientIP' && p.sessionAffinityConfig ? { sessionAffinityConfig: p.sessionAffinityConfig } : {}),
    },
  };
}

/** Whether the derived Service in the store has what `want` asks for (the fields this controller sets). */
export function derivedServiceCurrent(have: KubeObject | undefined, want: KubeObject): boolean {
  if (!have) return false;
  const hs = (have.spec ?? {}) as Record<string, unknown>;
  const ws = (want.spec ?? {}) as Record<string, unknown>;
  const portsOf = (s: Record<string, unknown>) =>
    JSON.stringify(((Array.isArray(s['ports']) ? s['ports'] : []) as ServicePort[]).map((x) => [x.name ?? '', x.protocol ?? 'TCP', x.port]).sort());
  const owner = (o: KubeObject) => JSON.stringify((o.metadata.ownerReferences ?? []).map((r) => [r.kind, r.name, r.uid]));
  return (
    portsOf(hs) === portsOf(ws) &&
    (hs['sessionAffinity'] ?? 'None') === ws['sessionAffinity'] &&
    JSON.stringify(hs['sessionAffinityConfig'] ?? null) === JSON.stringify(ws['sessionAffinityConfig'] ?? null) &&
    owner(have) === owner(want) &&
    Object.entries(want.metadata.labels ?? {}).every(([k, v]) => have.metadata.labels?.[k] === v)
  );
}

const familyOf = (ip: string): 'IPv4' | 'IPv6' | undefined =>
  /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) ? 'IPv4' : /^[0-9a-fA-F:]+$/.test(ip) && ip.includes(':') ? 'IPv6' : undefined;

/**
 * The clusterset IPs a derived Service holds: its ClusterIPs (at most one per family, in
 * the order the cluster gave them) and their families; none while it has no address.
 */
export function clustersetIPsOf(svc: KubeObject | undefined): { ips: string[]; ipFamilies: string[] } {
  const spec = (svc?.spec ?? {}) as { clusterIP?: unknown; clusterIPs?: unknown };
  const raw = Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0 ? spec.clusterIPs : [spec.clusterIP];
  const ips: string[] = [];
  const ipFamilies: string[] = [];
  for (const ip of raw) {
    if (typeof ip !== 'string' || ip === '' || ip === 'None') continue;
    const f = familyOf(ip);
    if (!f || ipFamilies.includes(f)) continue;
    ips.push(ip);
    ipFamilies.push(f);
  }
  return { ips, ipFamilies };
}
