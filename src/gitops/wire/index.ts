// GitOps wire formats: Argo CD's gRPC messages and services (descriptors), shared by the
// control module's API (server) and strait's CLI (client).
export { ARGOCD_SERVICES, K8S_TIME, V1A1_MESSAGE, argocdMessage, argocdRegistry, argocdService } from './argocd-proto.js';
