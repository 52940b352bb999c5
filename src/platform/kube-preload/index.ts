// Loading the Kubernetes client ahead of the store that uses it (platform/store/kubernetes), in a
// component of its own: a daemon imports it without loading the store's code (test/unit/process-weight.test.ts).
// It also reads a pod's in-cluster configuration, which the store takes without the client.
import { inClusterConfig } from './in-cluster.js';

export { inClusterConfig, InClusterConfig, SERVICE_ACCOUNT_DIR, type KubeConfigLike } from './in-cluster.js';

/**
 * Start loading the Kubernetes client now (it takes seconds on a busy node) for a store opened
 * later: a daemon that waits for something else first (a rolling update's successor waiting for
 * the node's ports) has it loaded by then. A failure is the later open's to report.
 */
export function preloadKubernetesClient(kubeconfigPath?: string, env: NodeJS.ProcessEnv = process.env): void {
  // a pod's own credentials, with no kubeconfig given, are read without the client (in-cluster.ts)
  if (kubeconfigPath === undefined && inClusterConfig(env) !== undefined) return;
  import('@kubernetes/client-node').catch(() => undefined);
}
