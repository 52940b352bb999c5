// Codes owned by mesh: CA, policy, sidecar proxy.
import { def, q, said } from '../define.js';

export const mesh = {
  meshCaInvalid: def('STRAIT_ERR_MESH_CA_INVALID', 'usage', (reason: string) => ({
    message: `mesh CA material is not usable: ${reason}; give a PEM root certificate with its own private key, or let strait create a new root`,
    detail: { reason },
  })),
  meshIdentityInvalid: def('STRAIT_ERR_MESH_IDENTITY_INVALID', 'usage', (what: string, value: string) => ({
    message: `${what} ${q(value)} cannot be part of a SPIFFE ID; use lower-case letters, digits and '-' (DNS label rules)`,
    detail: { what, value },
  })),
  meshConfigInvalid: def('STRAIT_ERR_MESH_CONFIG_INVALID', 'usage', (path: string, value: unknown, rule: string) => ({
    message: `invalid sidecar configuration at ${path}: ${q(value)} ${rule}`,
    detail: { path, value, rule },
  })),
  meshConfigManaged: def('STRAIT_ERR_MESH_CONFIG_MANAGED', 'denied', () => ({
    message: 'this sidecar is configured by the mesh agent (--config-ipc) or the control module (--control); its admin API does not take configuration',
  })),
  meshWorkloadNotFound: def('STRAIT_ERR_MESH_WORKLOAD_NOT_FOUND', 'notFound', (ref: string, known: string[]) => ({
    message: `no pod or Deployment ${q(ref)} among the mesh resources; known pods: ${known.slice(0, 20).join(', ') || '(none)'}`,
    detail: { ref, known },
  })),
  meshCheckFailed: def('STRAIT_ERR_MESH_CHECK_FAILED', 'failed', (errors: number) => ({
    message: `mesh check found ${errors} configuration error(s) that will break traffic; fix the resources listed above`,
    detail: { errors },
  })),
  meshOrigDst: def('STRAIT_ERR_MESH_ORIGINAL_DST', 'failed', (reason: string) => ({
    message: `cannot read the original destination of a redirected connection: ${reason}; is the nftables redirect in place?`,
    detail: { reason },
  })),
  meshPodAttach: def('STRAIT_ERR_MESH_POD_ATTACH', 'unavailable', (pod: string, netns: string, reason: string) => ({
    message: `the node proxy cannot serve pod ${q(pod)} in network namespace ${q(netns)}: ${reason}; the mesh agent retries, check that the namespace exists and the proxy ports are free in it`,
    detail: { pod, netns, reason },
  })),
  // --- the mesh configuration server's and the sidecar injector's refusals (answered over HTTP) ---
  meshTokenRequired: def('STRAIT_ERR_MESH_TOKEN_REQUIRED', 'unauthenticated', said),
  meshCallerDenied: def('STRAIT_ERR_MESH_CALLER_DENIED', 'denied', said),
  meshConfigUnknown: def('STRAIT_ERR_MESH_CONFIG_UNKNOWN', 'notFound', said),
  meshFlowsNotRecorded: def('STRAIT_ERR_MESH_FLOWS_NOT_RECORDED', 'unavailable', said),
};
