// The observed flows as rows (`strait mesh flows`, `strait mesh describe`, the console): read
// from the MeshTrafficObservations, with strictWouldReset decided again against the policy in
// force now (the same resolution `strait mesh describe` shows), so that a policy applied
// a moment ago counts even before the agent rewrote the objects.
import type { ResourceStore } from '../../../platform/store/index.js';
import { listMeshObjects } from '../controller/index.js';
import { buildMeshView, findWorkload, inboundOf, type MeshView } from '../policy/index.js';
import { strictWouldReset } from './strict.js';
import { OBSERVATION_KIND, type FlowRow, type MeshTrafficObservation } from './types.js';

export interface FlowFilter {
  namespace?: string;
  /** a pod name or a Deployment name */
  workload?: string;
  /** only flows STRICT would reset */
  strictWouldReset?: boolean;
}

/** Rows of the observations' flows, sorted by namespace, workload, pod, port, last seen (newest first). */
export function flowRows(observations: readonly MeshTrafficObservation[], view: MeshView | undefined, filter: FlowFilter = {}): FlowRow[] {
  const rows: FlowRow[] = [];
  for (const o of observations) {
    const namespace = o.metadata.namespace ?? 'default';
    const pod = o.metadata.name;
    const deployment = o.spec?.deployment;
    if (filter.namespace !== undefined && namespace !== filter.namespace) continue;
    if (filter.workload !== undefined && filter.workload !== pod && filter.workload !== deployment) continue;
    const w = view ? findWorkload(view, namespace, pod) : undefined;
    const inbound = view ? (w?.sidecar && w.name === pod ? inboundOf(view, w) : undefined) : o.status?.inbound;
    for (const f of Array.isArray(o.status?.flows) ? o.status.flows : []) {
      const row: FlowRow = { namespace, workload: deployment ?? pod, pod, ...f, strictWouldReset: strictWouldReset(inbound, f) };
      if (filter.strictWouldReset && !row.strictWouldReset) continue;
      rows.push(row);
    }
  }
  return rows.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) ||
      a.workload.localeCompare(b.workload) ||
      a.pod.localeCompare(b.pod) ||
      a.port - b.port ||
      b.lastSeen.localeCompare(a.lastSeen),
  );
}

/** The observations of the store (one namespace, or all) and the mesh's policy now, as rows. */
export async function listObservedFlows(store: ResourceStore, filter: FlowFilter = {}): Promise<FlowRow[]> {
  const obs = await store.list<MeshTrafficObservation>(OBSERVATION_KIND, filter.namespace !== undefined ? { namespace: filter.namespace } : {});
  const view = buildMeshView((await listMeshObjects(store)).objects);
  return flowRows(obs.items, view, filter);
}
