// Keeps a ClustersetZone in step with a cluster's store: the ServiceImports and imported
// EndpointSlices the multicluster import controller writes, and the Gateway records whose
// connection status says which clusters are reachable. When no Gateway record exists at all
// (no gateway daemon yet), every cluster counts as connected.
import { type Clock, systemClock } from '../../../base/clock/index.js';
import { Informer } from '../../../platform/controller/index.js';
import { ANN_SERVICE_TYPE, connectedClusters, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER, MANAGED_BY, MC_KINDS as K } from '../clusterset/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { type ClustersetZone, type ZoneCluster, type ZonePort } from './zone.js';

export class ZoneSource {
  private imports = new Map<string, KubeObject>();
  private slices = new Map<string, KubeObject>();
  private gateways = new Map<string, KubeObject>();
  private informers: Informer[] = [];

  constructor(private readonly store: ResourceStore, private readonly zone: ClustersetZone, private readonly clock: Clock = systemClock) {}

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
    const rebuildAll = () => { for (const k of new Set([...this.imports.keys(), ...this.zone.list().map((s) => `${s.namespace}/${s.name}`)])) this.rebuild(k); };
    this.informers.push(new Informer(this.store, K.ServiceImport, {}, track(this.imports, (o) => this.rebuild(key(o)), rebuildAll), { clock: this.clock }));
    this.informers.push(new Informer(this.store, K.EndpointSlice, { labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}` },
      track(this.slices, (o) => this.rebuild(`${o.metadata.namespace ?? ''}/${o.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`), rebuildAll), { clock: this.clock }));
    this.informers.push(new Informer(this.store, K.Gateway, {}, track(this.gateways, () => this.updateHealth(), () => this.updateHealth()), { clock: this.clock }));
    for (const i of this.informers) i.start();
  }

  stop(): void {
    for (const i of this.informers) i.stop();
  }

  private updateHealth(): void {
    const connected = connectedClusters([...this.gateways.values()], this.zone.localCluster);
    this.zone.setHealth(connected ? { isConnected: (cluster) => connected.has(cluster) } : { isConnected: () => true });
  }

  private rebuild(svcKey: string): void {
    const [ns, name] = svcKey.split('/') as [string, string];
    const imp = this.imports.get(svcKey);
    const clusters = new Map<string, ZoneCluster>();
    let headlessSlices = false;
    const slicePorts: ZonePort[] = [];
    for (const s of this.slices.values()) {
      if (s.metadata.namespace !== ns || s.metadata.labels?.[LABEL_SERVICE_NAME] !== name) continue;
      const cluster = s.metadata.labels?.[LABEL_SOURCE_CLUSTER];
      if (!cluster) continue;
      const eps = (s['endpoints'] as { addresses?: string[]; hostname?: string; conditions?: { ready?: boolean } }[] | undefined) ?? [];
      const ports = (s['ports'] as ZonePort[] | undefined) ?? [];
      clusters.set(cluster, {
        endpoints: eps.flatMap((e) => (e.addresses ?? []).map((ip) => ({ ip, ...(e.hostname ? { hostname: e.hostname } : {}), ready: e.conditions?.ready !== false }))),
        ports,
      });
      if (s.metadata.annotations?.[ANN_SERVICE_TYPE] === 'Headless') headlessSlices = true;
      for (const p of ports) if (!slicePorts.some((q) => q.name === p.name && q.port === p.port && q.protocol === p.protocol)) slicePorts.push(p);
    }
    // the imported slices alone make a name answerable (they are written first); the
    // ServiceImport, when present, has the last word on type and ports
    if (!imp && clusters.size === 0) {
      this.zone.remove(ns, name);
      return;
    }
    const spec = (imp?.spec ?? {}) as { type?: string; ports?: ZonePort[] };
    const headless = spec.type ? spec.type === 'Headless' : headlessSlices;
    this.zone.upsert({ namespace: ns, name, headless, ports: spec.ports ?? slicePorts, clusters });
  }
}
