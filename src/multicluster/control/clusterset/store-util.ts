// Small helpers over the ResourceStore for this component.
import { Kinds } from '../../../platform/resources/index.js';
import { kindRef as ref, type KubeObject, type ResourceStore } from '../../../platform/store/index.js';

export { ref };
export const K = {
  Namespace: ref(Kinds.Namespace),
  ConfigMap: ref(Kinds.ConfigMap),
  Secret: ref(Kinds.Secret),
  Service: ref(Kinds.Service),
  Pod: ref(Kinds.Pod),
  EndpointSlice: ref(Kinds.EndpointSlice),
  ServiceExport: ref(Kinds.ServiceExport),
  ServiceImport: ref(Kinds.ServiceImport),
  Cluster: ref(Kinds.Cluster),
  Endpoint: ref(Kinds.Endpoint),
  Gateway: ref(Kinds.Gateway),
  Submariner: ref(Kinds.Submariner),
  Broker: ref(Kinds.Broker),
} as const;

/** Namespaces known to exist, per store: a namespace is made once, not checked on every write. */
const ensured = new WeakMap<ResourceStore, Set<string>>();

export async function ensureNamespace(store: ResourceStore, name: string): Promise<void> {
  let known = ensured.get(store);
  if (!known) ensured.set(store, (known = new Set()));
  if (known.has(name)) return;
  const existing = await store.get(K.Namespace, name);
  if (existing) {
    known.add(name);
    return;
  }
  // awaited: a Kubernetes API server (or a store behind the store API) may take the caller's
  // next write before the namespace exists and answer 404 for it (seen in CI: deploy-broker's
  // ServiceAccount). It costs one extra commit once per namespace and store, then it is known.
  await store.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  known.add(name);
}

export const b64 = (s: string | Buffer): string => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('base64');
export const unb64 = (s: unknown): string => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/** The string map of a ConfigMap (data) */
export function cmData(obj: KubeObject | undefined): Record<string, string> {
  const d = obj?.['data'];
  return d && typeof d === 'object' ? (d as Record<string, string>) : {};
}
