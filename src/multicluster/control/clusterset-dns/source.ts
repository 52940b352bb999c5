// Keeps a ClustersetZone in step with a cluster's store: the ServiceImports and imported
// EndpointSlices the multicluster import controller writes, and the Gateway records whose
// connection status says which clusters are reachable. When no Gateway record exists at all
// (no gateway daemon yet), every cluster counts as connected.
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { Informer } from '../../../platform/controller/index.js';
import {
  ANN_SERVICE_TYPE,
  connectedClusters,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  MANAGED_BY,
  MC_KINDS as K,
} from '../clusterset/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { type Ipv4, parseIpv4, parsePort } from '../../../base/config/index.js';
import { type ClustersetZone, type ZoneCluster, type ZoneEndpoint, type ZonePort } from './zone.js';

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const rec = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Ports as the zone takes them; entries that do not parse are left out. */
function zonePorts(v: unknown): ZonePort[] {
  const out: ZonePort[] = [];
  for (const x of list(v)) {
    const p = rec(x);
    const port = parsePort(p?.['port']);
    const protocol = p?.['protocol'] ?? 'TCP';
    if (!p || !port || (protocol !== 'TCP' && protocol !== 'UDP' && protocol !== 'SCTP')) continue;
    const name = p['name'];
    out.push({ ...(typeof name === 'string' && LABEL.test(name) ? { name } : {}), protocol, port });
  }
  return out;
}

/** Endpoints as the zone takes them: IPv4 addresses only, hostnames that are DNS labels. */
function zoneEndpoints(v: unknown): ZoneEndpoint[] {
  const out: ZoneEndpoint[] = [];
  for (const x of list(v)) {
    const e = rec(x);
    if (!e) continue;
    const hostname = typeof e['hostname'] === 'string' && LABEL.test(e['hostname']) ? e['hostname'] : undefined;
    const ready = rec(e['conditions'])?.['ready'] !== false;
    for (const a of list(e['addresses'])) {
      const ip = parseIpv4(a);
      if (ip) out.push({ ip, ...(hostname ? { hostname } : {}), ready });
    }
  }
  return out;
}

/** ns/name of the service an imported slice belongs to */
const serviceOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`;

/**
 * Each event rebuilds the one service it touches, from that service's own slices (an
 * index by service): an export costs the same whatever the number of other exports.
 */
export class ZoneSource {
  private imports = new Map<string, KubeObject>();
  /** imported slices by service (ns/name), then by slice (ns/name) */
  private slicesByService = new Map<string, Map<string, KubeObject>>();
  /** slice (ns/name) -> its service, to move a slice whose label changed */
  private serviceOfSlice = new Map<string, string>();
  private gateways = new Map<string, KubeObject>();
  /** the connected clusters last given to the zone ('' before any): health moves only when they change */
  private healthKey: string | undefined;
  private informers: Informer[] = [];

  constructor(
    private readonly store: ResourceStore,
    private readonly zone: ClustersetZone,
    private readonly clock: Clock = systemClock,
  ) {}

  start(): void {
    const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const track = (map: Map<string, KubeObject>, after: (o: KubeObject) => void, afterList: () => void) => ({
      onList: (items: KubeObject[]) => {
        map.clear();
        for (const o of items) map.set(key(o), o);
        afterList();
      },
      onEvent: (type: string, o: KubeObject) => {
        if (type === 'DELETED') map.delete(key(o));
        else map.set(key(o), o);
        after(o);
      },
    });
    const rebuildAll = () => {
      for (const k of new Set([...this.imports.keys(), ...this.slicesByService.keys(), ...this.zone.list().map((s) => `${s.namespace}/${s.name}`)]))
        this.rebuild(k);
    };
    this.informers.push(
      new Informer(
        this.store,
        K.ServiceImport,
        {},
        track(this.imports, (o) => this.rebuild(key(o)), rebuildAll),
        { clock: this.clock },
      ),
    );
    this.informers.push(
      new Informer(
        this.store,
        K.EndpointSlice,
        { labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}` },
        {
          onList: (items) => {
            this.slicesByService.clear();
            this.serviceOfSlice.clear();
            for (const o of items) this.putSlice(key(o), o);
            rebuildAll();
          },
          onEvent: (type, o) => {
            const was = this.dropSlice(key(o));
            if (type !== 'DELETED') this.putSlice(key(o), o);
            if (was !== undefined && was !== serviceOf(o)) this.rebuild(was);
            this.rebuild(serviceOf(o));
          },
        },
        { clock: this.clock },
      ),
    );
    this.informers.push(
      new Informer(
        this.store,
        K.Gateway,
        {},
        track(
          this.gateways,
          () => this.updateHealth(),
          () => this.updateHealth(),
        ),
        { clock: this.clock },
      ),
    );
    for (const i of this.informers) i.start();
  }

  stop(): void {
    for (const i of this.informers) i.stop();
  }

  private putSlice(sliceKey: string, o: KubeObject): void {
    const svc = serviceOf(o);
    let m = this.slicesByService.get(svc);
    if (!m) this.slicesByService.set(svc, (m = new Map()));
    m.set(sliceKey, o);
    this.serviceOfSlice.set(sliceKey, svc);
  }

  /** forget a slice; the service it was filed under */
  private dropSlice(sliceKey: string): string | undefined {
    const svc = this.serviceOfSlice.get(sliceKey);
    if (svc === undefined) return undefined;
    this.serviceOfSlice.delete(sliceKey);
    const m = this.slicesByService.get(svc);
    m?.delete(sliceKey);
    if (m?.size === 0) this.slicesByService.delete(svc);
    return svc;
  }

  private updateHealth(): void {
    const connected = connectedClusters([...this.gateways.values()], this.zone.localCluster);
    // a Gateway record that changed only in what the zone does not use (its RTT, say) leaves the zone (and its answer cache) alone
    const key = connected ? [...connected].sort().join(',') : '*';
    if (key === this.healthKey) return;
    this.healthKey = key;
    this.zone.setHealth(connected ? { isConnected: (cluster) => connected.has(cluster) } : { isConnected: () => true });
  }

  private rebuild(svcKey: string): void {
    const [ns, name] = svcKey.split('/') as [string, string];
    const imp = this.imports.get(svcKey);
    const clusters = new Map<string, ZoneCluster>();
    let headlessSlices = false;
    const slicePorts: ZonePort[] = [];
    for (const s of this.slicesByService.get(svcKey)?.values() ?? []) {
      const cluster = s.metadata.labels?.[LABEL_SOURCE_CLUSTER];
      if (!cluster) continue;
      const ports = zonePorts(s['ports']);
      clusters.set(cluster, { endpoints: zoneEndpoints(s['endpoints']), ports });
      if (s.metadata.annotations?.[ANN_SERVICE_TYPE] === 'Headless') headlessSlices = true;
      for (const p of ports) if (!slicePorts.some((q) => q.name === p.name && q.port === p.port && q.protocol === p.protocol)) slicePorts.push(p);
    }
    // the imported slices alone make a name answerable (they are written first); the
    // ServiceImport, when present, has the last word on type and ports
    if (!imp && clusters.size === 0) {
      this.zone.remove(ns, name);
      return;
    }
    const spec = rec(imp?.spec) ?? {};
    const headless = typeof spec['type'] === 'string' ? spec['type'] === 'Headless' : headlessSlices;
    // the clusterset IPs: what the ServiceImport's derived Service holds (derived-service.ts)
    const ips = headless
      ? []
      : list(spec['ips'])
          .map((x) => parseIpv4(x))
          .filter((x): x is Ipv4 => x !== undefined);
    this.zone.upsert({
      namespace: ns,
      name,
      headless,
      ports: spec['ports'] !== undefined ? zonePorts(spec['ports']) : slicePorts,
      ...(ips.length > 0 ? { ips } : {}),
      clusters,
    });
  }
}
