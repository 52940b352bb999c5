// `strait diagnose --kubeconfig`: whether the cluster itself reaches its broker, as its
// control module's multicluster agent measures it on its own calls (the gauge
// strait_mc_broker_reachable, read through the API server's pod proxy). The `broker` check
// is made from where the command runs, which may reach a broker the cluster cannot (a
// firewall between the clusters, not between the user and the broker).
import { isStraitError } from '../../base/errors/index.js';
import type { KubernetesResourceStore } from '../../platform/store/index.js';
import type { DiagnoseCheck } from '../control/clusterset/index.js';
import { STRAIT_NAMESPACE } from './diagnose-workloads.js';

interface PodLike {
  metadata: { name: string };
  spec?: { containers?: { ports?: { name?: string; containerPort?: number }[] }[] };
  status?: { phase?: string };
}

/** deploy/control.yaml's metrics port (metricsListen) */
const CONTROL_METRICS_PORT = 9103;

export async function diagnoseBrokerReach(kube: KubernetesResourceStore, namespace = STRAIT_NAMESPACE): Promise<DiagnoseCheck[]> {
  const check = (status: DiagnoseCheck['status'], message: string): DiagnoseCheck[] => [{ check: 'broker-reach', status, message }];
  try {
    const p = await kube.raw({
      method: 'GET',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      query: { labelSelector: 'app.kubernetes.io/name=strait-control' },
    });
    const pod = ((p.body as { items?: PodLike[] }).items ?? []).find((x) => x.status?.phase === 'Running');
    // (no control module running: the workloads check says why)
    if (!pod) return [];
    const port = pod.spec?.containers?.flatMap((c) => c.ports ?? []).find((x) => x.name === 'metrics')?.containerPort ?? CONTROL_METRICS_PORT;
    const m = await kube.raw({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${pod.metadata.name}:${port}/proxy/metrics` });
    const v = /^strait_mc_broker_reachable ([01])\b/m.exec(m.text ?? '')?.[1];
    const who = `the cluster's control module (pod ${namespace}/${pod.metadata.name})`;
    if (v === undefined) return check('skip', `${who} has not probed a broker yet (not joined, or just started)`);
    if (v === '1') return check('ok', `${who} reaches the broker`);
    return check(
      'fail',
      `${who} cannot reach the broker (strait_mc_broker_reachable 0): tunnels and the services imported so far keep working; new and changed exports wait for it (strait show exports); check the path from this cluster's nodes to the broker's API server`,
    );
  } catch (err) {
    return check('skip', `cannot read the control module's metrics through the API server: ${isStraitError(err) ? err.message : String(err)}`);
  }
}
