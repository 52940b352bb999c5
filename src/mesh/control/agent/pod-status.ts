// The sidecar in the Pod's status, as an injected pod shows it in Kubernetes: one
// containerStatuses entry per container of the spec, and `istio-proxy` for the sidecar the
// agent runs (ready once the sidecar said so, restartCount its restarts). `strait get pods`
// then counts READY 2/2 like kubectl. A pod whose sidecar stopped loses the entry.
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';

export const SIDECAR_CONTAINER = 'istio-proxy';

interface ContainerStatus {
  name: string;
  image?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
}

export interface SidecarState {
  pod: string;
  ready: boolean;
  restarts: number;
}

/** The containerStatuses a pod should carry, or undefined when it carries none and needs none. */
export function wantedContainerStatuses(pod: KubeObject, sidecar: SidecarState | undefined): ContainerStatus[] | undefined {
  const status = (pod.status ?? {}) as { phase?: string; containerStatuses?: ContainerStatus[] };
  const running = status.phase === 'Running';
  const containers = (pod.spec as { containers?: { name: string; image?: string }[] } | undefined)?.containers ?? [];
  const had = status.containerStatuses;
  if (!sidecar && !had?.some((c) => c.name === SIDECAR_CONTAINER)) return undefined;
  const app = containers.map((c) => {
    const old = had?.find((h) => h.name === c.name);
    return {
      name: c.name,
      ...(c.image ? { image: c.image } : {}),
      ready: old?.ready ?? running,
      started: old?.started ?? running,
      restartCount: old?.restartCount ?? 0,
    };
  });
  if (!sidecar) return app;
  return [...app, { name: SIDECAR_CONTAINER, image: 'strait/sidecar', ready: running && sidecar.ready, started: true, restartCount: sidecar.restarts }];
}

/** Write each injected pod's containerStatuses where they differ; a conflict is left for the next call. */
export async function publishSidecarStatus(store: ResourceStore, sidecars: readonly SidecarState[], namespaces: readonly string[]): Promise<void> {
  const byPod = new Map(sidecars.map((s) => [s.pod, s]));
  const seen = new Set([...namespaces, ...sidecars.map((s) => s.pod.split('/')[0] as string)]);
  for (const ns of seen) {
    for (const pod of (await store.list({ apiVersion: 'v1', kind: 'Pod' }, { namespace: ns })).items) {
      const want = wantedContainerStatuses(pod, byPod.get(`${ns}/${pod.metadata.name}`));
      if (!want) continue;
      const have = (pod.status as { containerStatuses?: unknown } | undefined)?.containerStatuses;
      if (JSON.stringify(have) === JSON.stringify(want)) continue;
      await store.updateStatus({ ...pod, status: { ...(pod.status ?? {}), containerStatuses: want } }).catch(() => undefined);
    }
  }
}
