export {
  SidecarSupervisor,
  podRedirectScript,
  PROXY_UID,
  INBOUND_PORT,
  OUTBOUND_PORT,
  ADMIN_PORT,
  METRICS_PORT,
  type SidecarSupervisorOptions,
  type ProxySupervisor,
  type ProxyStatus,
} from './sidecar-supervisor.js';
export { NodeProxySupervisor, type NodeProxySupervisorOptions } from './node-proxy-supervisor.js';
export { startMeshAgent, MESH_DATAPLANES, type MeshAgent, type MeshAgentOptions, type MeshDataplane } from './mesh-agent.js';
export { defaultMeshObjects } from './defaults.js';
