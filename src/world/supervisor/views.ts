// From Services and EndpointSlices (however they were obtained: the world's plan, or
// a store list/watch) to what the data plane needs: the node service proxy's table
// and the cluster DNS records. Each Service is parsed on its own into typed values
// (Ipv4, Port): one that does not parse, or that claims a ClusterIP another Service
// holds, is refused with a reason and left out; the others are programmed.
import { parseIpv4, parsePort, type Ipv4, type Port } from '../../base/config/index.js';
import type { KubeObject } from '../../platform/store/index.js';
import type { ProxyService, ProxyServicePort } from '../service-proxy/index.js';
import type { ServiceRecord } from '../cluster-dns/index.js';

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface RefusedService {
  namespace: string;
  name: string;
  /** what is wrong, for a Warning Event on the Service and the log */
  reason: string;
}

export interface ServiceViews {
  proxy: ProxyService[];
  dns: ServiceRecord[];
  /** Services left out of both, and why */
  refused: RefusedService[];
}

const rec = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The ready endpoint addresses and the slice ports of one Service's slices. */
interface Endpoints {
  ips: Ipv4[];
  slicePorts: { name?: string; protocol: string; port: Port }[];
  /** whether the slice lists ports at all (one that does serves only those, as kube-proxy reads it) */
  listsPorts: boolean;
}

function endpointsOf(slices: KubeObject[], ns: string, name: string): Endpoints[] {
  const out: Endpoints[] = [];
  for (const s of slices) {
    if ((s.metadata.namespace ?? 'default') !== ns || s.metadata.labels?.['kubernetes.io/service-name'] !== name) continue;
    const ips: Ipv4[] = [];
    for (const e of list(s['endpoints'])) {
      const ep = rec(e);
      if (!ep || rec(ep['conditions'])?.['ready'] === false) continue;
      for (const a of list(ep['addresses'])) {
        const ip = parseIpv4(a);
        if (ip) ips.push(ip);
      }
    }
    const slicePorts: Endpoints['slicePorts'] = [];
    for (const x of list(s['ports'])) {
      const p = rec(x);
      const port = parsePort(p?.['port']);
      if (!p || !port) continue;
      slicePorts.push({
        ...(typeof p['name'] === 'string' ? { name: p['name'] } : {}),
        protocol: typeof p['protocol'] === 'string' ? p['protocol'] : 'TCP',
        port,
      });
    }
    out.push({ ips, slicePorts, listsPorts: Array.isArray(s['ports']) });
  }
  return out;
}

/** One Service as the data plane sees it, or the reason it cannot be programmed. */
function parseService(svc: KubeObject, slices: KubeObject[]): { clusterIP?: Ipv4; ports: ProxyServicePort[]; endpointIPs: Ipv4[] } | string {
  const spec = rec(svc.spec) ?? {};
  const rawIP = spec['clusterIP'];
  let clusterIP: Ipv4 | undefined;
  if (rawIP !== undefined && rawIP !== '' && rawIP !== 'None') {
    clusterIP = parseIpv4(rawIP);
    if (!clusterIP) return `spec.clusterIP ${JSON.stringify(rawIP)} is not an IPv4 address`;
  }
  if (spec['ports'] !== undefined && !Array.isArray(spec['ports'])) return `spec.ports must be a list (got ${JSON.stringify(spec['ports'])?.slice(0, 80)})`;
  const mine = endpointsOf(slices, svc.metadata.namespace ?? 'default', svc.metadata.name);
  const ports: ProxyServicePort[] = [];
  for (const [i, x] of list(spec['ports']).entries()) {
    const p = rec(x);
    const port = parsePort(p?.['port']);
    if (!p || !port) return `spec.ports[${i}].port must be an integer from 1 to 65535`;
    const proto = p['protocol'] ?? 'TCP';
    if (proto !== 'TCP' && proto !== 'UDP') return `spec.ports[${i}].protocol ${JSON.stringify(proto)} is not supported by the service proxy (TCP, UDP)`;
    const name = typeof p['name'] === 'string' ? p['name'] : undefined;
    const target = parsePort(p['targetPort']) ?? port;
    // a slice serves a Service port when it lists a port of that name and protocol (kube-proxy
    // matches by name); one that lists ports but not this one has no endpoints for it (an
    // imported cluster whose port the ServiceImport resolved another way); a slice without a
    // ports field: the Service's target port
    const endpoints = mine.flatMap((m) => {
      const sp = m.slicePorts.find((s) => (name ? s.name === name : true) && s.protocol === proto);
      if (!sp && m.listsPorts) return [];
      const epPort = sp?.port ?? target;
      return m.ips.map((ip) => ({ ip, port: epPort }));
    });
    ports.push({ protocol: proto, port, endpoints });
  }
  return { ...(clusterIP ? { clusterIP } : {}), ports, endpointIPs: [...new Set(mine.flatMap((m) => m.ips))] };
}

const age = (o: KubeObject): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0;

export function serviceViews(services: KubeObject[], slices: KubeObject[]): ServiceViews {
  const proxy: ProxyService[] = [];
  const dns: ServiceRecord[] = [];
  const refused: RefusedService[] = [];
  // the oldest Service keeps a contested ClusterIP, as the allocator would have given it first
  const ordered = [...services].sort(
    (a, b) => age(a) - age(b) || `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
  );
  const holders = new Map<string, string>();
  for (const svc of ordered) {
    const ns = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name;
    if (typeof ns !== 'string' || !LABEL.test(ns) || typeof name !== 'string' || !LABEL.test(name)) {
      refused.push({ namespace: String(ns), name: String(name), reason: 'namespace and name must be DNS-1123 labels' });
      continue;
    }
    const parsed = parseService(svc, slices);
    if (typeof parsed === 'string') {
      refused.push({ namespace: ns, name, reason: parsed });
      continue;
    }
    if (parsed.clusterIP) {
      const holder = holders.get(parsed.clusterIP);
      if (holder) {
        refused.push({ namespace: ns, name, reason: `spec.clusterIP ${parsed.clusterIP} is already allocated to Service ${holder}` });
        continue;
      }
      holders.set(parsed.clusterIP, `${ns}/${name}`);
    }
    dns.push({ namespace: ns, name, ...(parsed.clusterIP ? { clusterIP: parsed.clusterIP } : {}), endpointIPs: parsed.endpointIPs });
    if (parsed.clusterIP) proxy.push({ namespace: ns, name, clusterIP: parsed.clusterIP, ports: parsed.ports });
  }
  return { proxy, dns, refused };
}
