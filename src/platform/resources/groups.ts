// The product words inside identifiers, in one place. Defaults are the upstream
// groups so that existing manifests apply unchanged; STRAIT_GROUP_* overrides them.
const env = (name: string, dflt: string): string => process.env[name] ?? dflt;

export const GROUPS = Object.freeze({
  /** <gitops_group>: AppProject, Application */
  gitops: env('STRAIT_GROUP_GITOPS', 'argoproj.io'),
  /** <gitops>: the product word in the key store ConfigMap name */
  gitopsWord: env('STRAIT_WORD_GITOPS', 'argocd'),
  /** <mesh>: security.<mesh>.io, networking.<mesh>.io, sidecar.<mesh>.io/inject */
  mesh: env('STRAIT_GROUP_MESH', 'istio.io'),
  meshWord: env('STRAIT_WORD_MESH', 'istio'),
  /** <mesh_operator_group>: ServiceMeshControlPlane */
  meshOperator: env('STRAIT_GROUP_MESH_OPERATOR', 'maistra.io'),
  /** MCS API */
  multicluster: env('STRAIT_GROUP_MULTICLUSTER', 'multicluster.x-k8s.io'),
  /** cluster-link records (Endpoint, Gateway, Cluster), Submariner's group */
  cluster: env('STRAIT_GROUP_CLUSTER', 'submariner.io'),
  /** strait's own mesh kinds (no upstream equivalent): MeshTrafficObservation */
  straitMesh: env('STRAIT_GROUP_STRAIT_MESH', 'mesh.strait.dev'),
});

/** Key store ConfigMap name, e.g. argocd-gpg-keys-cm */
export const GPG_KEYS_CM = `${GROUPS.gitopsWord}-gpg-keys-cm`;
/** SSH allowed signers ConfigMap (a strait extension), e.g. argocd-ssh-allowed-signers-cm */
export const SSH_SIGNERS_CM = `${GROUPS.gitopsWord}-ssh-allowed-signers-cm`;
/** Sidecar injection label/annotation, e.g. sidecar.istio.io/inject */
export const INJECT_KEY = `sidecar.${GROUPS.mesh}/inject`;
