// Pods and Deployments applied to a cluster's store while the world runs become real:
//   - a Deployment gets `replicas` Pods (owner reference, template labels and image);
//   - a Pod without an address is scheduled on the least-loaded node (or spec.nodeName),
//     gets an IP from that node's slice, a namespace and veth, its resolv.conf, and its
//     image's process (strait/echo); then status.phase Running and status.podIP;
//   - a deleted Pod's process and namespace are removed.
// Pods of the world file are left alone (the plan made them). Images other than the
// built-in ones get phase Failed with reason ErrImagePull.
import type { Logger } from 'pino';
import { intToIpv4, parseCidr } from '../../base/config/index.js';
import { IMAGES, type Image } from '../world-file/index.js';
import { reconcileOnChange } from '../../platform/controller/index.js';
import { Kinds } from '../../platform/resources/index.js';
import { kindRef, type KubeObject, type ResourceStore } from '../../platform/store/index.js';

import { MANAGED_BY, NETNS_ANNOTATION } from './objects.js';
import { nameSuffix, type PlanCluster, type PlanPod } from './plan.js';
import { addPodNetwork, removePodNetwork } from './topology.js';

interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { nodeName?: string; containers?: { image?: string; ports?: { containerPort?: number }[] }[] };
}
interface DeploymentSpec {
  replicas?: number;
  selector?: { matchLabels?: Record<string, string> };
  template?: PodTemplate;
}

export interface PodHooks {
  /** start the pod's process (strait/echo) */
  start(cluster: PlanCluster, pod: PlanPod): void;
  /** stop it */
  stop(cluster: PlanCluster, pod: PlanPod): Promise<void>;
  /** the set of pods changed (world.json) */
  changed(): void;
}

export interface PodRuntime {
  settled(): Promise<void>;
  stop(): void;
}

const keyOf = (ns: string | undefined, name: string): string => `${ns ?? 'default'}/${name}`;

/** Each Deployment gets its replicas as Pods of its template (names as the world file's Deployments get them), extra ones deleted, its status counted. */
async function reconcileDeployments(cluster: PlanCluster, store: ResourceStore): Promise<void> {
  const [deps, pods] = await Promise.all([store.list(kindRef(Kinds.Deployment)), store.list(kindRef(Kinds.Pod))]);
  for (const d of deps.items) {
    const spec = (d.spec ?? {}) as DeploymentSpec;
    const ns = d.metadata.namespace ?? 'default';
    const owned = pods.items
      .filter(
        (p) => (p.metadata.namespace ?? 'default') === ns && p.metadata.ownerReferences?.some((o) => o.kind === 'Deployment' && o.name === d.metadata.name),
      )
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const want = spec.replicas ?? 1;
    const rs = nameSuffix(`${cluster.name}/${ns}/${d.metadata.name}`, 10);
    for (let r = 0; owned.length < want && r < want + owned.length + 50; r++) {
      const name = `${d.metadata.name}-${rs}-${nameSuffix(`${cluster.name}/${ns}/${d.metadata.name}/${r}`)}`;
      if (owned.some((p) => p.metadata.name === name)) continue;
      const tpl = spec.template ?? {};
      const pod: KubeObject = {
        apiVersion: Kinds.Pod.apiVersion,
        kind: 'Pod',
        metadata: {
          name,
          namespace: ns,
          labels: { ...(tpl.metadata?.labels ?? {}), ...MANAGED_BY },
          ...(tpl.metadata?.annotations ? { annotations: { ...tpl.metadata.annotations } } : {}),
          ownerReferences: [{ apiVersion: d.apiVersion, kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid ?? '', controller: true }],
        },
        spec: structuredClone(tpl.spec ?? {}),
      };
      owned.push(await store.apply(pod, { fieldManager: 'strait-world' }));
    }
    for (const extra of owned.slice(want)) await store.delete(kindRef(Kinds.Pod), extra.metadata.name, ns);
    const readyCount = Math.min(want, owned.length);
    const status = d.status as { replicas?: number; readyReplicas?: number } | undefined;
    if (status?.replicas !== want || status.readyReplicas !== readyCount) {
      await store
        .updateStatus({ ...d, status: { replicas: want, readyReplicas: readyCount, availableReplicas: readyCount, updatedReplicas: readyCount } })
        .catch(() => undefined);
    }
  }
}

/** The started pod is Running with its address; where it runs is recorded as the world's own pods say it: spec.nodeName and the netns annotation. */
async function markRunning(cluster: PlanCluster, store: ResourceStore, log: Logger, obj: KubeObject, pod: PlanPod): Promise<void> {
  const nodeName = pod.node;
  const spec = (obj.spec ?? {}) as PodTemplate['spec'];
  const node = cluster.nodes.find((n) => n.name === nodeName);
  await store.updateStatus({
    ...obj,
    spec: { ...spec, nodeName },
    status: {
      phase: 'Running',
      podIP: pod.ip,
      podIPs: [{ ip: pod.ip }],
      hostIP: node?.underlayIP,
      startTime: new Date().toISOString(),
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
  // where it runs, as the world's own pods say it: spec.nodeName and the netns annotation
  const fresh = await store.get(kindRef(Kinds.Pod), obj.metadata.name, pod.namespace);
  if (fresh) {
    await store
      .update({
        ...fresh,
        metadata: { ...fresh.metadata, annotations: { ...(fresh.metadata.annotations ?? {}), [NETNS_ANNOTATION]: pod.netns } },
        spec: { ...(fresh.spec as object), nodeName },
      })
      .catch((err: unknown) => log.warn({ err, pod: keyOf(pod.namespace, pod.name) }, "could not record the pod's node"));
  }
}

/** A free address in the node's pod CIDR and the next host-side veth name of that node (undefined: the CIDR is full). */
function allocate(cluster: PlanCluster, vethNext: Map<string, number>, nodeName: string): { ip: string; veth: string } | undefined {
  const node = cluster.nodes.find((n) => n.name === nodeName);
  if (!node) return undefined;
  const used = new Set(cluster.pods.filter((p) => p.node === nodeName).map((p) => p.ip));
  const c = parseCidr(node.podCIDR);
  for (let i = 2; i < 2 ** (32 - c.prefix) - 1; i++) {
    const ip = intToIpv4((c.network + i) >>> 0);
    if (!used.has(ip)) {
      const v = vethNext.get(nodeName) ?? 0;
      vethNext.set(nodeName, v + 1);
      return { ip, veth: `vp${v}` };
    }
  }
  return undefined;
}

/** The node with the fewest pods (the first of them on a tie). */
function leastLoaded(cluster: PlanCluster): string {
  const load = (n: string): number => cluster.pods.filter((p) => p.node === n).length;
  return cluster.nodes.reduce((best, n) => (load(n.name) < load(best.name) ? n : best), cluster.nodes[0] as PlanCluster['nodes'][number]).name;
}

export function startPodRuntime(cluster: PlanCluster, store: ResourceStore, log: Logger, hooks: PodHooks): PodRuntime {
  const planned = new Set(cluster.pods.map((p) => keyOf(p.namespace, p.name)));
  const mine = new Map<string, PlanPod>();
  const vethNext = new Map(cluster.nodes.map((n) => [n.name, cluster.pods.filter((p) => p.node === n.name).length]));

  async function pods(): Promise<void> {
    const list = await store.list(kindRef(Kinds.Pod));
    const seen = new Set<string>();
    for (const obj of list.items) {
      const key = keyOf(obj.metadata.namespace, obj.metadata.name);
      seen.add(key);
      if (planned.has(key) || mine.has(key)) continue;
      const spec = (obj.spec ?? {}) as PodTemplate['spec'];
      const image = spec?.containers?.[0]?.image ?? '';
      if (!(IMAGES as readonly string[]).includes(image)) {
        if ((obj.status as { phase?: string } | undefined)?.phase !== 'Failed') {
          await store.updateStatus({
            ...obj,
            status: { phase: 'Failed', reason: 'ErrImagePull', message: `image ${JSON.stringify(image)} is not built in; use one of ${IMAGES.join(', ')}` },
          });
        }
        continue;
      }
      const nodeName = spec?.nodeName && cluster.nodes.some((n) => n.name === spec.nodeName) ? spec.nodeName : leastLoaded(cluster);
      const slot = allocate(cluster, vethNext, nodeName);
      if (!slot) {
        await store.updateStatus({ ...obj, status: { phase: 'Pending', reason: 'OutOfAddresses', message: `node ${nodeName} has no free pod address` } });
        continue;
      }
      const ns = obj.metadata.namespace ?? 'default';
      const pod: PlanPod = {
        cluster: cluster.name,
        namespace: ns,
        name: obj.metadata.name,
        node: nodeName,
        netns: `${cluster.name}.${ns}.${obj.metadata.name}`,
        ip: slot.ip,
        hostVeth: slot.veth,
        image: image as Image,
        port: spec?.containers?.[0]?.ports?.[0]?.containerPort ?? 8080,
        labels: { ...(obj.metadata.labels ?? {}) },
        annotations: { ...(obj.metadata.annotations ?? {}) },
      };
      mine.set(key, pod);
      cluster.pods.push(pod);
      await addPodNetwork(cluster, pod);
      hooks.start(cluster, pod);
      await markRunning(cluster, store, log, obj, pod);
      log.info({ cluster: cluster.name, pod: key, node: nodeName, ip: pod.ip }, 'pod started');
      hooks.changed();
    }
    for (const [key, pod] of mine) {
      if (seen.has(key)) continue;
      mine.delete(key);
      cluster.pods.splice(cluster.pods.indexOf(pod), 1);
      await hooks.stop(cluster, pod);
      await removePodNetwork(pod);
      log.info({ cluster: cluster.name, pod: key }, 'pod removed');
      hooks.changed();
    }
  }

  return reconcileOnChange(store, [Kinds.Deployment, Kinds.Pod].map(kindRef), () => reconcileDeployments(cluster, store).then(pods), {
    onError: (err) => log.warn({ err, cluster: cluster.name }, 'pod runtime reconcile failed; retrying'),
  });
}
