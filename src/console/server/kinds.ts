// What the console's store gateway serves: the kinds its views show (read by everyone
// logged in) and the two it changes (by a user who may act). Secrets, ConfigMaps, Leases
// and anything else are refused: a console session is no way around the store's token.
import { Kinds, type KindName } from '../../platform/resources/index.js';
import type { KindRef } from '../../platform/store/index.js';

/**
 * The mesh's observed traffic (branch mesh-flows: one object per injected pod, written by
 * the mesh agent from its sidecars' reports). Its group follows STRAIT_GROUP_STRAIT_MESH
 * once it is a kind of src/platform/resources; until then its default group.
 */
export const MESH_TRAFFIC: KindRef = { apiVersion: `${process.env['STRAIT_GROUP_STRAIT_MESH'] ?? 'mesh.strait.dev'}/v1alpha1`, kind: 'MeshTrafficObservation' };

export const READ_KINDS: readonly KindName[] = [
  'Namespace', 'Node', 'Pod', 'Service', 'Deployment', 'EndpointSlice', 'Event',
  'ServiceExport', 'ServiceImport', 'Cluster', 'Endpoint', 'Gateway',
  'PeerAuthentication', 'DestinationRule', 'ServiceMeshControlPlane',
  'Application', 'AppProject',
];
export const WRITE_KINDS: readonly KindName[] = ['ServiceExport', 'PeerAuthentication'];

const versionsOf = (name: KindName): string[] => [Kinds[name].apiVersion, ...(Kinds[name].alsoServed ?? [])];
const matches = (names: readonly KindName[], k: KindRef): boolean =>
  names.some((n) => Kinds[n].kind === k.kind && versionsOf(n).includes(k.apiVersion));

export const mayRead = (k: KindRef): boolean => matches(READ_KINDS, k) || (k.kind === MESH_TRAFFIC.kind && k.apiVersion === MESH_TRAFFIC.apiVersion);
export const mayWrite = (k: KindRef): boolean => matches(WRITE_KINDS, k);

/** The apiVersion of each kind the browser asks for (the groups are configurable on the server). */
export function kindTable(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of READ_KINDS) out[n] = Kinds[n].apiVersion;
  out[MESH_TRAFFIC.kind] = MESH_TRAFFIC.apiVersion;
  return out;
}
