// What the console's store gateway serves: the kinds its views show (read by everyone
// logged in) and the two it changes (by a user who may act). Secrets, ConfigMaps, Leases
// and anything else are refused: a console session is no way around the store's token.
import { Kinds, type KindName } from '../../platform/resources/index.js';
import type { KindRef } from '../../platform/store/index.js';

/** The mesh's observed traffic: one MeshTrafficObservation per injected pod, written by the mesh agent. */
export const MESH_TRAFFIC: KindRef = { apiVersion: Kinds.MeshTrafficObservation.apiVersion, kind: Kinds.MeshTrafficObservation.kind };

export const READ_KINDS: readonly KindName[] = [
  'Namespace',
  'Node',
  'Pod',
  'Service',
  'Deployment',
  'EndpointSlice',
  'Event',
  'ServiceExport',
  'ServiceImport',
  'Cluster',
  'Endpoint',
  'Gateway',
  'PeerAuthentication',
  'DestinationRule',
  'ServiceMeshControlPlane',
  'Application',
  'AppProject',
  'MeshTrafficObservation',
];
export const WRITE_KINDS: readonly KindName[] = ['ServiceExport', 'PeerAuthentication'];

const versionsOf = (name: KindName): string[] => [Kinds[name].apiVersion, ...(Kinds[name].alsoServed ?? [])];
const matches = (names: readonly KindName[], k: KindRef): boolean => names.some((n) => Kinds[n].kind === k.kind && versionsOf(n).includes(k.apiVersion));

export const mayRead = (k: KindRef): boolean => matches(READ_KINDS, k);
export const mayWrite = (k: KindRef): boolean => matches(WRITE_KINDS, k);

/** The apiVersion of each kind the browser asks for (the groups are configurable on the server). */
export function kindTable(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of READ_KINDS) out[n] = Kinds[n].apiVersion;
  return out;
}
