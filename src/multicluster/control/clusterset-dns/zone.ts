// The clusterset.local zone: what each imported service resolves to. Fed from the
// cluster's ServiceImports and imported EndpointSlices (see source.ts); answers per
// the MCS API's and Submariner Lighthouse's rules:
//   <svc>.<ns>.svc.clusterset.local            A: the ServiceImport's clusterset IPs (spec.ips),
//                                              while a cluster behind them is connected and
//                                              healthy; without them (none allocated yet, or
//                                              Lighthouse mode) the local cluster's ClusterIP
//                                              when it exports and is healthy, else round-robin
//                                              over connected, healthy clusters; headless: all pod IPs
//   <cluster>.<svc>.<ns>.svc.clusterset.local  A: that cluster's
//   <host>.<cluster>.<svc>.<ns>.svc...         A: one pod of a headless service (its hostname, else its dashed address)
//   _<port>._<proto>.[<cluster>.]<svc>.<ns>.svc.clusterset.local  SRV for named ports
//   <svc>.<ns>.svc.clusterset.local SRV         one record per port number and target (tcp/42 and
//                                              udp/42 give one), headless: one per pod
// TTL 5; NXDOMAIN for names not exported; NODATA (with SOA) for other types of known names.
// The zone holds typed values only (Ipv4 addresses, Port numbers, DNS-label hostnames and
// port names): source.ts parses what the store holds and leaves out what does not parse.
import type { Ipv4, Port } from '../../../base/config/index.js';

export const ZONE = 'clusterset.local';
export const TTL = 5;

export type RType = 'A' | 'SRV' | 'SOA';

export interface Rr {
  name: string;
  type: RType;
  ttl: number;
  /** A */
  address?: string;
  /** SRV */
  priority?: number;
  weight?: number;
  port?: number;
  target?: string;
}

export interface Answer {
  rcode: 0 | 3; // NOERROR, NXDOMAIN
  /** false when the answer rotates (round-robin): it must not be reused for the next query */
  stable: boolean;
  answers: Rr[];
  additionals: Rr[];
  authority: Rr[];
}

export interface ZonePort {
  /** a DNS-1123 label */
  name?: string;
  protocol: 'TCP' | 'UDP' | 'SCTP';
  port: Port;
}

export interface ZoneEndpoint {
  ip: Ipv4;
  /** a DNS-1123 label */
  hostname?: string;
  ready: boolean;
}

export interface ZoneCluster {
  endpoints: ZoneEndpoint[];
  ports: ZonePort[];
}

export interface ZoneService {
  namespace: string;
  name: string;
  headless: boolean;
  ports: ZonePort[];
  /** the ServiceImport's clusterset IPs (spec.ips; IPv4 only: the zone answers A): none for headless or before allocation */
  ips?: Ipv4[];
  /** cluster id -> what that cluster exports */
  clusters: Map<string, ZoneCluster>;
}

export interface ClusterHealth {
  /** whether traffic can reach this cluster now (the local cluster always can) */
  isConnected(cluster: string): boolean;
}

const SOA_TAIL = { primary: `ns.dns.${ZONE}`, admin: `hostmaster.${ZONE}` };

export class ClustersetZone {
  private services = new Map<string, ZoneService>();
  private namespaces = new Map<string, number>();
  private rr = new Map<string, number>();
  /**
   * bumped on a change that can alter any answer (cluster health); a service's own change
   * bumps only its version (versionOf): the server keeps the answers of every other name
   */
  generation = 0;
  /** per service (ns/name): bumped at each upsert and removal */
  private versions = new Map<string, number>();
  /** bumped when a namespace appears or goes (answers for <ns>.svc.clusterset.local) */
  private nsVersion = 0;
  serial: number;

  constructor(
    readonly localCluster: string,
    private health: ClusterHealth = { isConnected: () => true },
    serial = 1,
  ) {
    this.serial = serial;
  }

  setHealth(h: ClusterHealth): void {
    this.health = h;
    this.generation++;
  }

  touch(): void {
    this.generation++;
  }

  upsert(svc: ZoneService): void {
    const key = `${svc.namespace}/${svc.name}`;
    if (!this.services.has(key)) {
      const n = this.namespaces.get(svc.namespace) ?? 0;
      if (n === 0) this.nsVersion++;
      this.namespaces.set(svc.namespace, n + 1);
    }
    this.services.set(key, svc);
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
  }

  remove(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    if (!this.services.delete(key)) return;
    const n = (this.namespaces.get(namespace) ?? 1) - 1;
    if (n <= 0) {
      this.namespaces.delete(namespace);
      this.nsVersion++;
    } else this.namespaces.set(namespace, n);
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
  }

  /**
   * What the answer for a name depends on, as a string that changes whenever that answer
   * may: the zone's generation and the version of the one service the name is under (or,
   * for the zone's apex and namespace names, of the namespace list). `qnameLower` in lower
   * case, without the final dot.
   */
  versionOf(qnameLower: string): string {
    const suffix = `.svc.${ZONE}`;
    if (qnameLower.endsWith(suffix)) {
      const head = qnameLower.slice(0, -suffix.length);
      const dot = head.lastIndexOf('.');
      if (dot > 0) {
        const prev = head.lastIndexOf('.', dot - 1);
        return `${this.generation}/${this.versions.get(`${head.slice(dot + 1)}/${head.slice(prev + 1, dot)}`) ?? 0}`;
      }
    }
    return `${this.generation}/ns${this.nsVersion}`;
  }

  get(namespace: string, name: string): ZoneService | undefined {
    return this.services.get(`${namespace}/${name}`);
  }

  list(): ZoneService[] {
    return [...this.services.values()];
  }

  soa(): Rr & { primary: string; admin: string; serial: number; refresh: number; retry: number; expiration: number; minimum: number } {
    return { name: ZONE, type: 'SOA', ttl: TTL, ...SOA_TAIL, serial: this.serial, refresh: 7200, retry: 1800, expiration: 86400, minimum: TTL };
  }

  /** Whether a name is inside the zone (then this zone answers it, else it is forwarded). */
  static inZone(qnameLower: string): boolean {
    return qnameLower === ZONE || qnameLower.endsWith(`.${ZONE}`);
  }

  /** Answer a question. `qname` as asked (any case, with or without the final dot). */
  resolve(qname: string, qtype: number): Answer {
    this.rotated = false;
    const a = this.lookup(qname, qtype);
    a.stable = !this.rotated;
    return a;
  }

  private rotated = false;

  private lookup(qname: string, qtype: number): Answer {
    const name = qname.replace(/\.$/, '');
    const lower = name.toLowerCase();
    const out: Answer = { rcode: 0, stable: true, answers: [], additionals: [], authority: [] };
    const nodata = () => this.nodata(out);
    const nx = () => this.nxdomain(out);
    if (lower === ZONE) {
      if (qtype === 6 || qtype === 255) out.answers.push({ ...this.soa(), name });
      else out.authority.push(this.soa());
      return out;
    }
    const suffix = `.svc.${ZONE}`;
    if (lower === `svc.${ZONE}`) return nodata();
    if (!lower.endsWith(suffix)) return nx();
    const labels = lower.slice(0, -suffix.length).split('.');
    const origLabels = name.slice(0, -suffix.length).split('.');
    const wantA = qtype === 1 || qtype === 255;

    if (labels.length === 1) return this.namespaces.has(labels[0]!) ? nodata() : nx();

    const ns = labels[labels.length - 1]!;
    const svcName = labels[labels.length - 2]!;
    const svc = this.get(ns, svcName);
    if (!svc) return nx();
    const base = `${origLabels[origLabels.length - 2]}.${origLabels[origLabels.length - 1]}${name.slice(name.length - suffix.length)}`;
    const rest = labels.slice(0, -2);

    // SRV names: _port._proto[.cluster]
    if (rest.length >= 2 && rest[0]!.startsWith('_') && rest[1]!.startsWith('_')) return this.lookupSrvName(svc, name, rest, qtype, base, out);
    if (rest.length === 0) return this.lookupServiceName(svc, name, qtype, base, out);
    if (rest.length === 1) return this.lookupClusterName(svc, name, rest[0]!, qtype, base, out);

    if (rest.length === 2 && svc.headless) {
      const [host, cluster] = rest as [string, string];
      const c = svc.clusters.get(cluster);
      const e = c?.endpoints.find((x) => (x.hostname ?? '').toLowerCase() === host);
      if (!c || !e) return nx();
      if (!wantA || !e.ready || !this.health.isConnected(cluster)) return nodata();
      out.answers.push({ name, type: 'A', ttl: TTL, address: e.ip });
      return out;
    }
    return nx();
  }

  /** No record of this type: the zone's SOA in the authority section. */
  private nodata(out: Answer): Answer {
    out.authority.push(this.soa());
    return out;
  }

  /** No such name: NXDOMAIN, the zone's SOA in the authority section. */
  private nxdomain(out: Answer): Answer {
    out.rcode = 3;
    out.authority.push(this.soa());
    return out;
  }

  /** `_port._proto[.cluster].<svc>.<ns>.svc.clusterset.local` */
  private lookupSrvName(svc: ZoneService, name: string, rest: string[], qtype: number, base: string, out: Answer): Answer {
    if (rest.length > 3) return this.nxdomain(out);
    const portName = rest[0]!.slice(1);
    const proto = rest[1]!.slice(1);
    const cluster = rest[2];
    const port = svc.ports.find((p) => (p.name ?? '').toLowerCase() === portName && p.protocol.toLowerCase() === proto);
    if (!port) return this.nxdomain(out);
    if (cluster !== undefined && !svc.clusters.has(cluster)) return this.nxdomain(out);
    if (!(qtype === 33 || qtype === 255)) return this.nodata(out);
    this.srv(svc, name, port, cluster, base, out);
    return out.answers.length > 0 ? out : this.nodata(out);
  }

  /** `<svc>.<ns>.svc.clusterset.local`: the service's addresses, or SRV for each named port */
  private lookupServiceName(svc: ZoneService, name: string, qtype: number, base: string, out: Answer): Answer {
    if (qtype === 33) {
      for (const p of svc.ports) if (p.name) this.srv(svc, name, p, undefined, base, out);
      return out.answers.length > 0 ? out : this.nodata(out);
    }
    if (!(qtype === 1 || qtype === 255)) return this.nodata(out);
    for (const ip of this.serviceIps(svc)) out.answers.push({ name, type: 'A', ttl: TTL, address: ip });
    return out.answers.length > 0 ? out : this.nodata(out);
  }

  /** `<cluster>.<svc>.<ns>.svc.clusterset.local`: that cluster's ready endpoints while it is connected */
  private lookupClusterName(svc: ZoneService, name: string, cluster: string, qtype: number, base: string, out: Answer): Answer {
    const c = svc.clusters.get(cluster);
    if (!c) return this.nxdomain(out);
    if (qtype === 33) {
      for (const p of svc.ports) if (p.name) this.srv(svc, name, p, cluster, base, out);
      return out.answers.length > 0 ? out : this.nodata(out);
    }
    if (!(qtype === 1 || qtype === 255) || !this.health.isConnected(cluster)) return this.nodata(out);
    for (const e of c.endpoints) if (e.ready) out.answers.push({ name, type: 'A', ttl: TTL, address: e.ip });
    return out.answers.length > 0 ? out : this.nodata(out);
  }

  /** Clusters of a service that can be used now, sorted. */
  private usable(svc: ZoneService): string[] {
    const out: string[] = [];
    for (const [cluster, c] of svc.clusters) {
      if (!this.health.isConnected(cluster)) continue;
      if (!c.endpoints.some((e) => e.ready)) continue;
      out.push(cluster);
    }
    return out.sort();
  }

  private serviceIps(svc: ZoneService): string[] {
    const usable = this.usable(svc);
    if (svc.headless) {
      const ips: string[] = [];
      for (const cluster of usable) for (const e of svc.clusters.get(cluster)!.endpoints) if (e.ready) ips.push(e.ip);
      return ips;
    }
    if (usable.length === 0) return [];
    if (svc.ips && svc.ips.length > 0) return svc.ips;
    let cluster: string;
    if (usable.includes(this.localCluster)) cluster = this.localCluster;
    else {
      const key = `${svc.namespace}/${svc.name}`;
      const n = this.rr.get(key) ?? 0;
      this.rr.set(key, n + 1);
      if (usable.length > 1) this.rotated = true;
      cluster = usable[n % usable.length]!;
    }
    const e = svc.clusters.get(cluster)!.endpoints.find((x) => x.ready);
    return e ? [e.ip] : [];
  }

  /**
   * SRV records of one port. A record that is already in the answer (the same port and
   * target: a service's tcp/42 and udp/42 under the service name) is not repeated, nor its A.
   */
  private srv(svc: ZoneService, name: string, port: ZonePort, cluster: string | undefined, base: string, out: Answer): void {
    const add = (target: string, ips: string[]): void => {
      if (out.answers.some((r) => r.port === port.port && r.target === target)) return;
      out.answers.push({ name, type: 'SRV', ttl: TTL, priority: 0, weight: 50, port: port.port, target });
      for (const ip of ips) {
        if (!out.additionals.some((r) => r.name === target && r.address === ip)) out.additionals.push({ name: target, type: 'A', ttl: TTL, address: ip });
      }
    };
    const clusters = cluster === undefined ? this.usable(svc) : this.health.isConnected(cluster) ? [cluster] : [];
    if (!svc.headless) {
      if (cluster === undefined) {
        if (clusters.length === 0) return;
        // asked for once per answer: the service name's A may rotate
        if (out.answers.some((r) => r.port === port.port && r.target === base)) return;
        add(base, this.serviceIps(svc));
        return;
      }
      const target = `${cluster}.${base}`;
      const e = svc.clusters.get(cluster)?.endpoints.find((x) => x.ready);
      if (!e || clusters.length === 0) return;
      add(target, [e.ip]);
      return;
    }
    for (const c of clusters) {
      for (const e of svc.clusters.get(c)?.endpoints ?? []) {
        if (!e.ready || !e.hostname) continue;
        add(`${e.hostname}.${c}.${base}`, [e.ip]);
      }
    }
  }
}
