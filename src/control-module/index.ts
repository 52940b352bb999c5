// The control module (one per cluster): GitOps, and in Kubernetes mode the mesh and the
// multicluster control, assembled for daemon/control/main.ts.
export { runControlModule } from './run.js';
export { startKubernetesControl, type KubernetesControl, type KubernetesControlOptions } from './kubernetes.js';
export { parseControlArgs, type ControlConfig } from './args.js';
