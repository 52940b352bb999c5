// Loading the Kubernetes client ahead of the store that uses it (platform/store/kubernetes), in a
// component of its own: a daemon imports it without loading the store's code (test/unit/process-weight.test.ts).

/**
 * Start loading the Kubernetes client now (it takes seconds on a busy node) for a store opened
 * later: a daemon that waits for something else first (a rolling update's successor waiting for
 * the node's ports) has it loaded by then. A failure is the later open's to report.
 */
export function preloadKubernetesClient(): void {
  import('@kubernetes/client-node').catch(() => undefined);
}
