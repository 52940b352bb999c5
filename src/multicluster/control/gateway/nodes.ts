// nodesFrom: kubernetes: the gateway's node table follows the cluster's Node objects
// (src/multicluster/control/cluster-nodes), read from the API server (in-cluster or
// $KUBECONFIG, or ha.kubernetes.kubeconfig). Until the first list, the configured `nodes`
// (usually none) are all the gateway takes VXLAN from. Loaded with import() only then.
import type { Gateway } from '../../dataplane/gateway/index.js';
import { watchClusterNodes, type ClusterNode } from '../cluster-nodes/index.js';
import { openKubernetesStore, type ResourceStore } from '../../../platform/store/index.js';

type Log = (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;

export function startNodeSync(gateway: Gateway, log: Log, store?: ResourceStore): { stop(): void } {
  const kubeconfig = gateway.config.ha?.kubernetes.kubeconfig;
  const s = store ?? openKubernetesStore(typeof kubeconfig === 'string' ? { kubeConfigPath: kubeconfig } : {});
  let last = '';
  const w = watchClusterNodes(s, {
    self: gateway.config.name,
    onNodes(nodes: ClusterNode[]) {
      const key = JSON.stringify(nodes);
      if (key === last) return; // status heartbeats change nothing here
      try {
        gateway.setNodes(nodes.map((n) => ({ address: n.address, podCIDRs: n.podCIDRs })));
        last = key;
        log('info', `VXLAN senders: ${nodes.length} node(s) from the Node objects`, {
          nodes: nodes.map((n) => `${n.name}=${n.address}[${n.podCIDRs.join(',')}]`),
        });
      } catch (err) {
        log('error', 'Node objects rejected, keeping the node table', { err: String(err) });
      }
    },
    onError: (err) => log('warn', 'listing/watching Node objects failed; retrying', { err: String(err) }),
  });
  return { stop: () => w.stop() };
}
