export { SidecarSupervisor, podRedirectScript, PROXY_UID, INBOUND_PORT, OUTBOUND_PORT, ADMIN_PORT, METRICS_PORT, type SidecarSupervisorOptions } from './sidecar-supervisor.js';
export { startMeshAgent, type MeshAgent, type MeshAgentOptions } from './mesh-agent.js';
export { defaultMeshObjects } from './defaults.js';
