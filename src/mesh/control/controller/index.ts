export {
  MeshController,
  MESH_KINDS,
  INGRESS_FILE,
  listMeshObjects,
  type MeshControllerOptions,
  type PodConfigState,
  type ReconcileResult,
} from './mesh-controller.js';
export { ingressConfigFor, type IngressRouteSpec } from './ingress-config.js';
