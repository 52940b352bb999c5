// The mesh data plane: sidecar proxy (inbound enforcement, outbound mTLS origination),
// the node-level proxy (the same per pod, for every pod of a node in one process)
// and the ingress gateway. Node built-ins only; configuration arrives as plain objects.
export {
  SidecarProxy,
  type Address,
  type InboundListenOptions,
  type OutboundListenOptions,
  type OriginalDst,
  type ProxyEvent,
  type SidecarOptions,
} from './sidecar.js';
export {
  validateSidecarConfig,
  INBOUND_MODES,
  OUTBOUND_MODES,
  type InboundMode,
  type OutboundPolicy,
  type OutboundTlsMode,
  type ProxyIdentity,
  type SidecarConfig,
} from './config.js';
export { ProxyMetrics, MAX_PRINCIPALS, OTHER_PRINCIPAL, classifyTlsError, type AcceptReason, type HandshakeFailure, type ResetReason } from './metrics.js';
export { sniffTls } from './sniff.js';
export {
  FlowTable,
  DEFAULT_FLOW_LIMIT,
  MAX_FLOW_LIMIT,
  FLOW_REPORT_VERSIONS,
  type FlowMode,
  type FlowOutcome,
  type FlowReport,
  type FlowReportEntry,
  type FlowTls,
} from './flows.js';
export { peerUris, sanEntries, spiffeChecker, meshPeerIdentity, workloadSpiffeId, trustDomainOf, MESH_ALPN, type WorkloadSpiffeId } from './identity.js';
export { connectSpliced, resetSocket, splice, type Connector } from './splice.js';
export { NodeProxy, PROXY_MARK, type MeshPod, type NodeProxyOptions } from './node-proxy.js';
export { originalDst, sidecarRedirectRules, type RedirectRules } from './original-dst.js';
export { IngressGateway, IngressMetrics, type IngressConfig, type IngressRoute } from './ingress.js';
export { startRelay, type Relay, type RelayListen } from './relay.js';
export { SIDECAR_NODE_FLAGS } from './node-flags.js';
export { followMeshConfig, meshFlowsPoster, type MeshConfigClient, type MeshConfigClientOptions, type MeshFlowsPoster } from './config-client.js';
