// Keeps one cluster of the world in step with its store, as a small control plane:
//   1. Services without a ClusterIP get one from the service CIDR;
//   2. Services with a selector get an EndpointSlice (<name>-world) listing the ready
//      pods it selects;
//   3. every change of Services or EndpointSlices re-programs each node's service proxy
//      (nftables) and the cluster's DNS zone.
// Each reconcile lists the three kinds and converges (level-triggered); watches only
// say "something changed". Watches that expire are re-listed and restarted.
import type { Logger } from 'pino';
import { intToIpv4, parseCidr } from '../../base/config/index.js';
import { reconcileOnChange } from '../../platform/controller/index.js';
import { Kinds } from '../../platform/resources/index.js';
import { kindRef, type KubeObject, type ResourceStore } from '../../platform/store/index.js';

import { MANAGED_BY } from './objects.js';
import type { PlanCluster } from './plan.js';
import { serviceViews, type ServiceViews } from './views.js';

const MANAGER = 'strait-world';

interface ServiceSpec { clusterIP?: string; clusterIPs?: string[]; selector?: Record<string, string>; ports?: { name?: string; port: number; targetPort?: number | string; protocol?: string }[] }
interface PodLike { metadata: { name: string; namespace?: string; labels?: Record<string, string>; uid?: string }; spec?: { nodeName?: string }; status?: { podIP?: string; phase?: string } }

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

export function startClusterSync(cluster: PlanCluster, store: ResourceStore, log: Logger, program: (views: ServiceViews) => Promise<void>): ClusterSync {

  async function reconcile(): Promise<void> {
    const [svcs, slices, pods] = await Promise.all([
      store.list(kindRef(Kinds.Service)), store.list(kindRef(Kinds.EndpointSlice)), store.list(kindRef(Kinds.Pod)),
    ]);
    const used = new Set(svcs.items.map((s) => (s.spec as ServiceSpec | undefined)?.clusterIP).filter((ip): ip is string => !!ip && ip !== 'None'));
    used.add(cluster.dnsIP);
    for (const svc of svcs.items) {
      const spec = (svc.spec ?? {}) as ServiceSpec;
      if (spec.clusterIP) continue;
      const ip = allocateClusterIP(cluster.serviceCIDR, used);
      if (!ip) {
        log.error({ service: svc.metadata.name, serviceCIDR: cluster.serviceCIDR }, 'service CIDR is full');
        continue;
      }
      used.add(ip);
      const updated = { ...svc, spec: { ...spec, clusterIP: ip, clusterIPs: [ip] } };
      const saved = await store.update(updated);
      Object.assign(svc, saved);
      log.info({ service: `${svc.metadata.namespace}/${svc.metadata.name}`, clusterIP: ip }, 'ClusterIP allocated');
    }
    // EndpointSlices of selector Services, from the Running pods they select
    const ready = (pods.items as unknown as PodLike[]).filter((p) => p.status?.phase === 'Running' && p.status.podIP);
    for (const svc of svcs.items) {
      const spec = (svc.spec ?? {}) as ServiceSpec;
      const selector = Object.entries(spec.selector ?? {});
      if (selector.length === 0) continue;
      const ns = svc.metadata.namespace ?? 'default';
      const chosen = ready.filter((p) => (p.metadata.namespace ?? 'default') === ns && selector.every(([k, v]) => p.metadata.labels?.[k] === v))
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      const endpoints = chosen.map((p) => ({
        addresses: [p.status?.podIP as string], conditions: { ready: true }, ...(p.spec?.nodeName ? { nodeName: p.spec.nodeName } : {}),
        targetRef: { kind: 'Pod', name: p.metadata.name, namespace: ns, ...(p.metadata.uid ? { uid: p.metadata.uid } : {}) },
      }));
      const ports = (spec.ports ?? []).map((p) => ({ ...(p.name ? { name: p.name } : {}), port: typeof p.targetPort === 'number' ? p.targetPort : p.port, protocol: p.protocol ?? 'TCP' }));
      const name = `${svc.metadata.name}-world`;
      const existing = slices.items.find((s) => s.metadata.name === name && (s.metadata.namespace ?? 'default') === ns);
      if (existing && sameEndpoints(existing['endpoints'] ?? [], endpoints) && sameEndpoints(existing['ports'] ?? [], ports)) continue;
      const slice: KubeObject = {
        apiVersion: Kinds.EndpointSlice.apiVersion, kind: 'EndpointSlice',
        metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': svc.metadata.name, 'endpointslice.kubernetes.io/managed-by': MANAGER, ...MANAGED_BY } },
        addressType: 'IPv4', endpoints, ports,
      };
      const saved = existing ? await store.update({ ...slice, metadata: { ...slice.metadata, resourceVersion: existing.metadata.resourceVersion as string } }) : await store.apply(slice, { fieldManager: MANAGER });
      if (existing) Object.assign(existing, saved);
      else slices.items.push(saved);
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
    await program(serviceViews(svcs.items, slices.items.filter((s) => s.metadata.labels?.['kubernetes.io/service-name'])));
  }

  return reconcileOnChange(store, [Kinds.Service, Kinds.EndpointSlice, Kinds.Pod].map(kindRef), reconcile, {
    onError: (err) => log.warn({ err, cluster: cluster.name }, 'cluster sync failed; retrying'),
  });
}
