// Cluster DNS records: <svc>.<ns>.svc.cluster.local -> ClusterIP (headless: the pod
// IPs). Answers are computed from a snapshot of the cluster's Services and endpoints,
// replaced whole when they change. Other zones (clusterset.local) plug in as further
// resolvers in front of or behind this one. Records hold typed addresses (Ipv4) only.
import type { Ipv4 } from '../../base/config/index.js';

export const TTL_SECONDS = 5;

export interface DnsAnswer {
  /** 0 NOERROR, 3 NXDOMAIN */
  rcode: 0 | 3;
  /** IPv4 addresses for an A question (empty = NODATA) */
  addresses: string[];
}

/** A zone answers names it owns (returns undefined for names outside it). */
export interface DnsResolver {
  resolve(name: string, qtype: number): DnsAnswer | undefined;
}

export interface ServiceRecord {
  namespace: string;
  name: string;
  /** undefined: headless */
  clusterIP?: Ipv4;
  /** ready endpoint addresses (used for headless Services) */
  endpointIPs: Ipv4[];
}

const TYPE_A = 1;
const TYPE_ANY = 255;

export class ClusterZone implements DnsResolver {
  private names = new Map<string, string[]>();
  private readonly suffix: string;

  constructor(readonly domain = 'cluster.local') {
    this.suffix = `.svc.${domain}`;
  }

  /** Replace every record. */
  setServices(services: ServiceRecord[]): void {
    const names = new Map<string, string[]>();
    for (const s of services) {
      const ips = s.clusterIP ? [s.clusterIP] : [...s.endpointIPs].sort();
      names.set(`${s.name}.${s.namespace}${this.suffix}`, ips);
    }
    this.names = names;
  }

  resolve(rawName: string, qtype: number): DnsAnswer | undefined {
    const name = rawName.toLowerCase().replace(/\.$/, '');
    if (name !== this.domain && !name.endsWith(`.${this.domain}`)) return undefined;
    const ips = this.names.get(name);
    if (ips === undefined) {
      // <ns>.svc.cluster.local and svc.cluster.local exist as empty non-terminals
      const isParent = [...this.names.keys()].some((n) => n.endsWith(`.${name}`));
      return { rcode: isParent ? 0 : 3, addresses: [] };
    }
    return { rcode: 0, addresses: qtype === TYPE_A || qtype === TYPE_ANY ? ips : [] };
  }

  size(): number {
    return this.names.size;
  }
}
