export type {
  DestinationRule,
  DestinationRuleSpec,
  EffectiveMode,
  MtlsMode,
  PeerAuthentication,
  PeerAuthenticationSpec,
  PolicySource,
  ServiceMeshControlPlane,
  SmcpSpec,
  TlsMode,
  TlsSettings,
} from './types.js';
export { resolveInbound, labelsMatch, type InboundResolution, type PortMode, type WorkloadRef } from './peer-authentication.js';
export { resolveOutbound, selectDestinationRule, tlsFor, type DestinationRef, type EndpointFacts, type OutboundResolution } from './destination-rule.js';
export { hostMatches, resolveShortname, serviceFqdn, specificity, DEFAULT_DOMAIN } from './host.js';
export { controlPlaneSettings, generatedPolicies, DEFAULT_ROOT_NAMESPACE, GENERATED_ANNOTATION, type ControlPlaneSettings } from './control-plane.js';
export {
  buildMeshView,
  NETNS_ANNOTATION,
  endpointsOf,
  findWorkload,
  servicesSelecting,
  type MeshService,
  type MeshView,
  type ServicePort,
  type Workload,
} from './mesh-view.js';
export { describeWorkload, inboundOf, outboundTo, type OutboundRow, type WorkloadDescription } from './describe.js';
export { checkMesh, type Finding, type Severity } from './check.js';
export { sidecarConfigFor } from './sidecar-config.js';
export { readDestinationRule, readPeerAuthentication, type InvalidPolicy } from './parse.js';
