// Sidecar injection in Kubernetes mode: a mutating admission webhook the control module
// serves (deploy/sidecar-injector.yaml registers it). One door:
//   const inj = await serveSidecarInjector({ cert, key, image: 'strait:0.1.0', port: 9443 });
export { serveSidecarInjector, type SidecarInjector, type SidecarInjectorOptions } from './server.js';
export { reviewAdmission, type AdmissionResponse } from './review.js';
export {
  sidecarPatch,
  sidecarContainers,
  sidecarVolumes,
  wantsSidecar,
  PROXY_CONTAINER,
  INIT_CONTAINER,
  STATUS_ANNOTATION,
  TOKEN_AUDIENCE,
  TOKEN_DIR,
  ROOT_DIR,
  EXCLUDE_INBOUND_ANNOTATION,
  excludedInboundPorts,
  type SidecarOptions,
  type JsonPatchOp,
} from './patch.js';
export { createWebhookTls, patchWebhookCaBundle, serviceHosts, webhookCaBundleCurrent, type WebhookTls } from './webhook-tls.js';
