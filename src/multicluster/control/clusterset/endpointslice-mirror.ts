// The local cluster behind its own clusterset IP. A remote exporting cluster stands behind
// the derived Service as its ClusterIP (the imported slice `<svc>.<cluster>`): the client's
// service proxy DNATs the clusterset IP to it, the tunnel carries it, and that cluster's
// service proxy DNATs it again to a backend. The cluster's own ClusterIP cannot stand there:
// a service proxy translates a connection once on the client's node, and a second Service
// address would leave that node untranslated, to be translated by whichever node it reaches
// next, whose reply then goes straight back from the backend and is not recognised by the
// client. So, as Cilium's ClusterMesh mirrors a local Service's EndpointSlices into its
// derived Service, this cluster's own exported Service is represented behind the clusterset
// IP by copies of that Service's EndpointSlices (its backends' addresses and target ports),
// labelled with the derived Service's name; the MCS slice `<svc>.<cluster>` stays as it is
// (DNS answers `<cluster>.<svc>...` with the ClusterIP from it) but is not behind the derived
// Service. Pure functions here; agent.ts writes the objects.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../../platform/store/index.js';
import type { ServicePort } from './aggregate.js';
import { LABEL_K8S_SERVICE_NAME } from './derived-service.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY } from './names.js';

/** On a mirror slice: 'true' (the import controller tells mirrors from the MCS slices by it). */
export const LABEL_MIRROR = 'strait.io/endpointslice-mirror';
/** On a mirror slice: the name of the Service's own EndpointSlice it copies. */
export const ANN_MIRROR_OF = 'strait.io/mirror-of';
const ANN_MIRROR_HASH = 'strait.io/content-hash';

/** The mirror's name: the derived Service's and the copied slice's (a hash of it when the two would be too long). */
export function mirrorSliceName(derived: string, ownSlice: string): string {
  const name = `${derived}.${ownSlice}`;
  return name.length <= 253 ? name : `${derived}.${createHash('sha256').update(ownSlice).digest('hex').slice(0, 20)}`;
}

interface OwnEndpoint {
  addresses?: string[];
  conditions?: Record<string, unknown>;
  nodeName?: string;
  zone?: string;
}

/**
 * The mirror of one of the local Service's own EndpointSlices behind the derived Service:
 * its endpoints (addresses, conditions, node and zone), and of its ports only those of a
 * Service port the import took from this cluster (`accepted`: name and protocol; the slice
 * lists the backends' target port under the Service port's name).
 */
export function mirrorSlice(ns: string, service: string, derived: string, own: KubeObject, accepted: ServicePort[]): KubeObject {
  const endpoints = ((own['endpoints'] as OwnEndpoint[] | undefined) ?? []).map((e) => ({
    addresses: [...(e.addresses ?? [])],
    ...(e.conditions ? { conditions: { ...e.conditions } } : {}),
    ...(e.nodeName ? { nodeName: e.nodeName } : {}),
    ...(e.zone ? { zone: e.zone } : {}),
  }));
  const ports = ((own['ports'] as { name?: string; protocol?: string; port?: number }[] | undefined) ?? [])
    .filter((p) => accepted.some((a) => (a.name ?? '') === (p.name ?? '') && a.protocol === (p.protocol ?? 'TCP')))
    .map((p) => ({ ...(p.name ? { name: p.name } : {}), protocol: p.protocol ?? 'TCP', ...(p.port !== undefined ? { port: p.port } : {}) }));
  const addressType = typeof own['addressType'] === 'string' ? own['addressType'] : 'IPv4';
  const hash = createHash('sha256').update(JSON.stringify({ addressType, endpoints, ports })).digest('hex').slice(0, 16);
  return {
    apiVersion: own.apiVersion,
    kind: 'EndpointSlice',
    metadata: {
      name: mirrorSliceName(derived, own.metadata.name),
      namespace: ns,
      labels: {
        [LABEL_SERVICE_NAME]: service,
        [LABEL_K8S_SERVICE_NAME]: derived,
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_MIRROR]: 'true',
      },
      annotations: { [ANN_MIRROR_OF]: own.metadata.name, [ANN_MIRROR_HASH]: hash },
    },
    addressType,
    endpoints,
    ports,
  };
}

/** Whether a stored mirror already holds what `want` would write. */
export const mirrorCurrent = (have: KubeObject | undefined, want: KubeObject): boolean =>
  have !== undefined &&
  have.metadata.annotations?.[ANN_MIRROR_HASH] === want.metadata.annotations?.[ANN_MIRROR_HASH] &&
  have.metadata.labels?.[LABEL_K8S_SERVICE_NAME] === want.metadata.labels?.[LABEL_K8S_SERVICE_NAME];
