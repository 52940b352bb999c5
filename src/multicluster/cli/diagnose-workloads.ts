// `strait diagnose --kubeconfig`: the state of strait's own pods in the namespace deploy/ puts
// them in, with the cause where Kubernetes knows it (an unbound PersistentVolumeClaim, an
// unschedulable pod, a container that cannot start). One check line per problem.
import { isStraitError } from '../../base/errors/index.js';
import type { KubernetesResourceStore } from '../../platform/store/index.js';
import type { DiagnoseCheck } from '../control/clusterset/index.js';

/** deploy/kustomization.yaml's namespace */
export const STRAIT_NAMESPACE = 'strait-system';

interface ContainerStatus {
  name: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string; message?: string } };
}
interface PodLike {
  metadata: { name: string };
  spec?: { volumes?: { name: string; persistentVolumeClaim?: { claimName: string } }[] };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
  };
}
interface ClaimLike {
  metadata: { name: string };
  spec?: { storageClassName?: string };
  status?: { phase?: string };
}

/** container states that do not end by themselves */
const STUCK = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

export async function diagnoseWorkloads(kube: KubernetesResourceStore, namespace = STRAIT_NAMESPACE): Promise<DiagnoseCheck[]> {
  const out: DiagnoseCheck[] = [];
  const add = (status: DiagnoseCheck['status'], message: string): void => {
    out.push({ check: 'workloads', status, message });
  };
  let pods: PodLike[];
  let claims: Map<string, ClaimLike>;
  let what = 'pods';
  try {
    const p = await kube.raw({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods` });
    pods = ((p.body as { items?: PodLike[] }).items ?? []).sort((x, y) => x.metadata.name.localeCompare(y.metadata.name));
    what = 'PersistentVolumeClaims';
    const c = await kube.raw({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/persistentvolumeclaims` });
    claims = new Map(((c.body as { items?: ClaimLike[] }).items ?? []).map((x) => [x.metadata.name, x]));
  } catch (err) {
    add('warn', `cannot list the ${what} of ${namespace}: ${isStraitError(err) ? err.message : String(err)}`);
    return out;
  }
  if (pods.length === 0) {
    add('skip', `no pods in ${namespace}: strait's components are not deployed here (kubectl apply -k deploy/)`);
    return out;
  }
  let healthy = 0;
  for (const pod of pods) {
    const who = `pod ${namespace}/${pod.metadata.name}`;
    const st = pod.status ?? {};
    const problems: [DiagnoseCheck['status'], string][] = [];
    const scheduled = st.conditions?.find((c) => c.type === 'PodScheduled');
    if (st.phase === 'Pending') {
      for (const v of pod.spec?.volumes ?? []) {
        const name = v.persistentVolumeClaim?.claimName;
        if (name === undefined) continue;
        const claim = claims.get(name);
        if (!claim) problems.push(['fail', `${who} is Pending: its PersistentVolumeClaim ${name} does not exist`]);
        else if (claim.status?.phase !== 'Bound') {
          const sc = claim.spec?.storageClassName;
          // with a StorageClass that binds on first use (WaitForFirstConsumer) a claim is Pending until the pod is scheduled
          const stuck = sc === undefined || sc === '' || scheduled?.status === 'False';
          problems.push(
            stuck
              ? [
                  'fail',
                  `${who} is Pending: its PersistentVolumeClaim ${name} is not bound (${claim.status?.phase ?? 'Pending'}; storage class ${sc || 'none: the cluster has no default StorageClass'}): nothing provisions a volume for it. ` +
                    `Make a PersistentVolume or a StorageClass with a provisioner, or keep the repositories only as long as the pod: an emptyDir (Helm: githost.persistence.enabled=false) (kubectl -n ${namespace} describe pvc ${name})`,
                ]
              : [
                  'warn',
                  `${who} is Pending: its PersistentVolumeClaim ${name} is not bound yet (storage class ${sc}; kubectl -n ${namespace} describe pvc ${name})`,
                ],
          );
        }
      }
      if (problems.length === 0 && scheduled?.status === 'False')
        problems.push(['fail', `${who} is Pending: ${scheduled.reason ?? 'not scheduled'}: ${scheduled.message ?? ''}`.trim()]);
    } else if (st.phase === 'Failed' || st.phase === 'Unknown') {
      problems.push(['fail', `${who} is ${st.phase}`]);
    } else if (st.phase === 'Succeeded') {
      problems.push(['warn', `${who} has exited (Succeeded): strait's components are meant to keep running`]);
    }
    for (const cs of [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])]) {
      const w = cs.state?.waiting;
      if (w?.reason && STUCK.has(w.reason)) problems.push(['fail', `${who}: container ${cs.name} is ${w.reason}${w.message ? `: ${w.message}` : ''}`]);
      else if ((cs.restartCount ?? 0) > 0)
        problems.push([
          'warn',
          `${who}: container ${cs.name} restarted ${cs.restartCount} time(s) (kubectl -n ${namespace} logs ${pod.metadata.name} -c ${cs.name} --previous)`,
        ]);
    }
    if (problems.length === 0 && st.phase === 'Pending') problems.push(['warn', `${who} is Pending`]);
    if (problems.length === 0 && st.phase === 'Running') healthy++;
    for (const [s, m] of problems) add(s, m);
  }
  if (healthy === pods.length) add('ok', `${healthy} pod(s) in ${namespace} Running, none restarted`);
  return out;
}
