// The mesh of the control module in Kubernetes mode, assembled (kubernetes.ts), and its
// settings from the environment (env.ts).
export { runMeshKubernetes, type MeshKubernetes, type MeshKubernetesOptions } from './kubernetes.js';
export { ingressSettingsFromEnv, meshConfigSettingsFromEnv, webhookRecheckMsFromEnv, webhookSettingsFromEnv } from './env.js';
export { tokenReviewer } from './token-review.js';
export { runMeshAgent, MESH_AGENT_HELP } from './agent.js';
