export {
  MeshCa,
  certificateUris,
  DEFAULT_WORKLOAD_LIFETIME_MS,
  type CaMaterial,
  type IssueOptions,
  type RootOptions,
  type WorkloadCert,
  type WorkloadKeyType,
} from './mesh-ca.js';
export { CertRotator, type RotatorOptions } from './rotation.js';
export { loadOrCreateCa } from './ca-file.js';
export { publishRootCert, rootCertConfigMap, ROOT_CERT_CONFIGMAP, ROOT_CERT_KEY } from './root-configmap.js';
export { spiffeId, parseSpiffeId, type WorkloadIdentity } from './spiffe.js';
export { loadOrCreateCaInStore, MESH_CA_NAME } from './ca-secret.js';
