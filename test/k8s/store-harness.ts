// The Kubernetes store as the conformance suite sees it: one real API server per test
// file, CRDs from deploy/crds.yaml installed with kubectl, and per case a fresh store
// whose cleanup deletes everything the case made.
//
// A real API server is never empty: it makes the namespaces default/kube-system/
// kube-public/kube-node-lease and a ConfigMap in kube-system itself. The suite asserts on
// whole lists, so the store handed to it hides those (and only those); everything else
// goes to the real server unchanged.
import { join } from 'node:path';
import {
  openKubernetesStore,
  type KindRef,
  type KubeObject,
  type KubernetesResourceStore,
  type ListOptions,
  type ResourceStore,
  type WatchEvent,
  type WatchOptions,
} from '../../src/platform/store/index.js';
import { Kinds, type KindInfo } from '../../src/platform/resources/index.js';
import type { TestCluster } from './cluster.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const SYSTEM_NAMESPACES = new Set(['default', 'kube-system', 'kube-public', 'kube-node-lease']);
const SYSTEM_OWNED = new Set(['kube-system', 'kube-public', 'kube-node-lease']);

export function isSystemObject(o: KubeObject): boolean {
  if (o.kind === 'Namespace') return SYSTEM_NAMESPACES.has(o.metadata.name);
  return o.metadata.namespace !== undefined && SYSTEM_OWNED.has(o.metadata.namespace);
}

/** Install strait's CRDs with kubectl and wait until the API server serves them. */
export function installCrds(cluster: TestCluster): void {
  const crds = join(root, 'deploy', 'crds.yaml');
  const a = cluster.kubectl(['apply', '-f', crds]);
  if (a.status !== 0) throw new Error(`kubectl apply -f deploy/crds.yaml failed:\n${a.stderr}`);
  const w = cluster.kubectl(['wait', '--for', 'condition=Established', '--timeout', '60s', 'crd', '-l', 'app.kubernetes.io/part-of=strait']);
  if (w.status !== 0) throw new Error(`CRDs not established:\n${w.stderr}`);
}

/** A store that hides the API server's own objects from list and watch. */
export function hideSystemObjects(store: KubernetesResourceStore): ResourceStore {
  return {
    get: (k, n, ns) => store.get(k, n, ns),
    async list<T extends KubeObject>(kind: KindRef, opts?: ListOptions) {
      const l = await store.list<T>(kind, opts);
      return { ...l, items: l.items.filter((o) => !isSystemObject(o)) };
    },
    watch<T extends KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void) {
      return store.watch<T>(kind, opts, (ev) => {
        if (!isSystemObject(ev.object)) onEvent(ev);
      });
    },
    apply: (o, opts) => store.apply(o, opts),
    update: (o) => store.update(o),
    updateStatus: (o) => store.updateStatus(o),
    delete: (k, n, ns) => store.delete(k, n, ns),
    recordEvent: (ev) => store.recordEvent(ev),
    close: () => store.close(),
  };
}

const CLEAN: KindInfo[] = (Object.values(Kinds) as KindInfo[]).filter(
  (k) => !k.apiVersion.startsWith('apps/') && !['Namespace', 'Service', 'Pod', 'Node', 'Secret', 'EndpointSlice', 'Lease'].includes(k.kind),
);

/** Delete every object a case made (namespaces too: no namespace controller runs, so finalize them). */
export async function deleteEverything(cluster: TestCluster): Promise<void> {
  const store = openKubernetesStore({ kubeconfig: cluster.kubeconfig });
  try {
    for (const k of CLEAN) {
      for (const o of (await store.list(k)).items) {
        if (!isSystemObject(o)) await store.delete(k, o.metadata.name, o.metadata.namespace);
      }
    }
    for (const ns of (await store.list(Kinds.Namespace)).items) {
      if (isSystemObject(ns)) continue;
      await store.delete(Kinds.Namespace, ns.metadata.name);
      const r = cluster.kubectl(
        ['replace', '--raw', `/api/v1/namespaces/${ns.metadata.name}/finalize`, '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.metadata.name }, spec: { finalizers: [] } }),
      );
      if (r.status !== 0 && !/not found/i.test(r.stderr)) throw new Error(`finalize namespace ${ns.metadata.name}: ${r.stderr}`);
    }
  } finally {
    await store.close();
  }
}
