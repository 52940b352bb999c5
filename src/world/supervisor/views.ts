// From Services and EndpointSlices (however they were obtained: the world's plan, or
// a store list/watch) to what the data plane needs: the node service proxy's table
// and the cluster DNS records.
import type { KubeObject } from '../../platform/store/index.js';
import type { ProxyService } from '../service-proxy/index.js';
import type { ServiceRecord } from '../cluster-dns/index.js';

interface SvcSpec {
  clusterIP?: string;
  ports?: { name?: string; port: number; targetPort?: number | string; protocol?: string }[];
}
interface Slice {
  metadata: { labels?: Record<string, string>; namespace?: string };
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}

export interface ServiceViews {
  proxy: ProxyService[];
  dns: ServiceRecord[];
}

export function serviceViews(services: KubeObject[], slices: KubeObject[]): ServiceViews {
  const proxy: ProxyService[] = [];
  const dns: ServiceRecord[] = [];
  for (const svc of services) {
    const ns = svc.metadata.namespace ?? 'default';
    const spec = (svc.spec ?? {}) as SvcSpec;
    const mine = (slices as unknown as Slice[]).filter((s) => (s.metadata.namespace ?? 'default') === ns && s.metadata.labels?.['kubernetes.io/service-name'] === svc.metadata.name);
    const readyIPs = [...new Set(mine.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses)))];
    const headless = !spec.clusterIP || spec.clusterIP === 'None';
    dns.push({ namespace: ns, name: svc.metadata.name, ...(headless ? {} : { clusterIP: spec.clusterIP as string }), endpointIPs: readyIPs });
    if (headless) continue;
    proxy.push({
      namespace: ns,
      name: svc.metadata.name,
      clusterIP: spec.clusterIP as string,
      ports: (spec.ports ?? []).map((p) => {
        const protocol = (p.protocol ?? 'TCP') === 'UDP' ? 'UDP' : 'TCP';
        const endpoints = mine.flatMap((s) => {
          const sp = (s.ports ?? []).find((x) => (p.name ? x.name === p.name : true) && (x.protocol ?? 'TCP') === protocol);
          const port = sp?.port ?? (typeof p.targetPort === 'number' ? p.targetPort : p.port);
          return (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).flatMap((e) => e.addresses.map((ip) => ({ ip, port })));
        });
        return { protocol, port: p.port, endpoints };
      }),
    });
  }
  return { proxy, dns };
}
