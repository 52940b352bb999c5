// Keeps one cluster of the world in step with its store, as a small control plane:
//   1. Services without a ClusterIP get one from the service CIDR;
//   2. Services with a selector get an EndpointSlice (<name>-world) listing the ready
//      pods it selects;
//   3. every change of Services or EndpointSlices re-programs each node's service proxy
//      (nftables) and the cluster's DNS zone.
// EndpointSlices count only when they belong to a Service (kubernetes.io/service-name):
// the slices the multicluster agent imports for a ClusterSetIP import carry it (their
// derived Service's name: its clusterset IP is routed here, to the exporting clusters'
// ClusterIPs, like any selector-less Service); a headless import's slices, and every
// import's without a clusterset IP, carry only the MCS label, are served by the
// clusterset.local zone alone, and never wake this loop.
// Each reconcile lists the three kinds and converges (level-triggered); watches only
// say "something changed". Watches that expire are re-listed and restarted.
// One bad Service never stops the others: each is handled on its own, a Service that
// cannot be programmed is left out and reported (a Warning Event on it and the log),
// and the rest are programmed.
import type { Logger } from 'pino';
import { intToIpv4, parseCidr } from '../../base/config/index.js';
import { reconcileOnChange } from '../../platform/controller/index.js';
import { Kinds } from '../../platform/resources/index.js';
import { kindRef, type KubeObject, type ResourceStore } from '../../platform/store/index.js';

import { MANAGED_BY } from './objects.js';
import type { PlanCluster } from './plan.js';
import { serviceViews, type RefusedService, type ServiceViews } from './views.js';

const MANAGER = 'strait-world';
/** the EndpointSlices of a Service (the world's own and any other controller's); not the imported MCS ones */
const SERVICE_SLICES = 'kubernetes.io/service-name';

interface ServiceSpec {
  clusterIP?: string;
  clusterIPs?: string[];
  selector?: Record<string, string>;
  ports?: { name?: string; port: number; targetPort?: number | string; protocol?: string }[];
}
interface PodLike {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; uid?: string };
  spec?: { nodeName?: string };
  status?: { podIP?: string; phase?: string };
}

export interface ClusterSync {
  /** resolves after the next reconcile has finished */
  settled(): Promise<void>;
  stop(): void;
}

/** next free address of the service CIDR, from .11 up (.1 and .10 are kept) */
export function allocateClusterIP(serviceCIDR: string, used: Set<string>): string | undefined {
  const c = parseCidr(serviceCIDR);
  const size = 2 ** (32 - c.prefix);
  for (let i = 11; i < size - 1; i++) {
    const ip = intToIpv4((c.network + i) >>> 0);
    if (!used.has(ip)) return ip;
  }
  return undefined;
}

function sameEndpoints(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function startClusterSync(cluster: PlanCluster, store: ResourceStore, log: Logger, program: (views: ServiceViews) => Promise<void>): ClusterSync {
  /** ns/name -> the reason last reported, so a refused Service gets one Event per reason */
  const reported = new Map<string, string>();

  function report(refused: RefusedService[], svcs: KubeObject[]): void {
    const now = new Set<string>();
    for (const r of refused) {
      const key = `${r.namespace}/${r.name}`;
      now.add(key);
      if (reported.get(key) === r.reason) continue;
      reported.set(key, r.reason);
      log.warn({ cluster: cluster.name, service: key, reason: r.reason }, 'Service refused by the service proxy; the others are programmed');
      const uid = svcs.find((s) => s.metadata.name === r.name && (s.metadata.namespace ?? 'default') === r.namespace)?.metadata.uid;
      store
        .recordEvent({
          involvedObject: { apiVersion: 'v1', kind: 'Service', name: r.name, namespace: r.namespace, ...(uid ? { uid } : {}) },
          type: 'Warning',
          reason: 'ServiceRefused',
          message: r.reason,
          source: MANAGER,
        })
        .catch((err: unknown) => log.warn({ err, service: key }, 'cannot record the Event'));
    }
    for (const key of [...reported.keys()]) if (!now.has(key)) reported.delete(key);
  }

  async function reconcile(): Promise<void> {
    const [svcs, slices, pods] = await Promise.all([
      store.list(kindRef(Kinds.Service)),
      store.list(kindRef(Kinds.EndpointSlice), { labelSelector: SERVICE_SLICES }),
      store.list(kindRef(Kinds.Pod)),
    ]);
    const refused: RefusedService[] = [];
    const refuse = (svc: KubeObject, reason: string): void => {
      refused.push({ namespace: svc.metadata.namespace ?? 'default', name: svc.metadata.name, reason });
    };
    // Services the store's admission has not given a ClusterIP (stored before it ran)
    const used = new Set(svcs.items.map((s) => rec(s.spec)['clusterIP']).filter((ip): ip is string => typeof ip === 'string' && ip !== '' && ip !== 'None'));
    used.add(cluster.dnsIP);
    for (const svc of svcs.items) {
      const spec = rec(svc.spec);
      if (spec['clusterIP'] || spec['type'] === 'ExternalName') continue;
      const ip = allocateClusterIP(cluster.serviceCIDR, used);
      if (!ip) {
        refuse(svc, `the service CIDR ${cluster.serviceCIDR} is full`);
        continue;
      }
      used.add(ip);
      try {
        const saved = await store.update({ ...svc, spec: { ...spec, clusterIP: ip, clusterIPs: [ip] } });
        Object.assign(svc, saved);
        log.info({ service: `${svc.metadata.namespace}/${svc.metadata.name}`, clusterIP: ip }, 'ClusterIP allocated');
      } catch (err) {
        refuse(svc, `cannot allocate a ClusterIP: ${errText(err)}`);
      }
    }
    // EndpointSlices of selector Services, from the Running pods they select
    const ready = (pods.items as unknown as PodLike[]).filter((p) => p.status?.phase === 'Running' && p.status.podIP);
    for (const svc of svcs.items) {
      try {
        await syncSlice(svc, ready, slices.items);
      } catch (err) {
        refuse(svc, `cannot write its EndpointSlice: ${errText(err)}`);
      }
    }
    // slices of Services that are gone
    for (const s of slices.items) {
      const owner = s.metadata.labels?.['kubernetes.io/service-name'];
      if (s.metadata.labels?.['endpointslice.kubernetes.io/managed-by'] !== MANAGER) continue;
      if (!svcs.items.some((v) => v.metadata.name === owner && (v.metadata.namespace ?? 'default') === (s.metadata.namespace ?? 'default'))) {
        await store.delete(kindRef(Kinds.EndpointSlice), s.metadata.name, s.metadata.namespace);
        s.metadata.labels = {};
      }
    }
    const failed = new Set(refused.map((r) => `${r.namespace}/${r.name}`));
    const views = serviceViews(
      svcs.items.filter((s) => !failed.has(`${s.metadata.namespace ?? 'default'}/${s.metadata.name}`)),
      slices.items.filter((s) => s.metadata.labels?.['kubernetes.io/service-name']),
    );
    report([...refused, ...views.refused], svcs.items);
    await program(views);
  }

  /** Write the EndpointSlice <name>-world of one selector Service from the pods it selects. */
  async function syncSlice(svc: KubeObject, ready: PodLike[], slices: KubeObject[]): Promise<void> {
    const spec = rec(svc.spec) as ServiceSpec;
    const selector = Object.entries(rec(spec.selector)).filter((e): e is [string, string] => typeof e[1] === 'string');
    if (selector.length === 0) return;
    const ns = svc.metadata.namespace ?? 'default';
    const chosen = ready
      .filter((p) => (p.metadata.namespace ?? 'default') === ns && selector.every(([k, v]) => p.metadata.labels?.[k] === v))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const endpoints = chosen.map((p) => ({
      addresses: [p.status?.podIP as string],
      conditions: { ready: true },
      ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', name: p.metadata.name, namespace: ns, ...(p.metadata.uid ? { uid: p.metadata.uid } : {}) },
    }));
    if (spec.ports !== undefined && !Array.isArray(spec.ports)) throw new Error('spec.ports is not a list');
    const ports = (spec.ports ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      port: typeof p.targetPort === 'number' ? p.targetPort : p.port,
      protocol: p.protocol ?? 'TCP',
    }));
    const name = `${svc.metadata.name}-world`;
    const existing = slices.find((s) => s.metadata.name === name && (s.metadata.namespace ?? 'default') === ns);
    if (existing && sameEndpoints(existing['endpoints'] ?? [], endpoints) && sameEndpoints(existing['ports'] ?? [], ports)) return;
    const slice: KubeObject = {
      apiVersion: Kinds.EndpointSlice.apiVersion,
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace: ns,
        labels: { 'kubernetes.io/service-name': svc.metadata.name, 'endpointslice.kubernetes.io/managed-by': MANAGER, ...MANAGED_BY },
      },
      addressType: 'IPv4',
      endpoints,
      ports,
    };
    const saved = existing
      ? await store.update({ ...slice, metadata: { ...slice.metadata, resourceVersion: existing.metadata.resourceVersion as string } })
      : await store.apply(slice, { fieldManager: MANAGER });
    if (existing) Object.assign(existing, saved);
    else slices.push(saved);
  }

  return reconcileOnChange(
    store,
    [kindRef(Kinds.Service), { kind: kindRef(Kinds.EndpointSlice), labelSelector: SERVICE_SLICES }, kindRef(Kinds.Pod)],
    reconcile,
    {
      onError: (err) => log.warn({ err, cluster: cluster.name }, 'cluster sync failed; retrying'),
    },
  );
}
