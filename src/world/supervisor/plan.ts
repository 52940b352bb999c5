// From a validated world file to a concrete plan: every namespace, interface, address,
// pod placement and ClusterIP, computed once and deterministically (same file, same
// names and addresses), so tests and docs can name them.
import { createHash } from 'node:crypto';
import { intToIpv4, parseCidr } from '../../base/config/index.js';
import { nodeCidrOf, type Image, type WorldFile, type WorldServicePort } from '../world-file/index.js';

export interface PlanNode {
  cluster: string;
  name: string;
  role: 'gateway' | 'worker';
  /** ip netns name */
  netns: string;
  /** address on the cluster's underlay (eth0) */
  underlayIP: string;
  /** root-namespace end of the underlay veth */
  rootVeth: string;
  /** this node's slice of the cluster CIDR */
  podCIDR: string;
  /** the pod bridge's address (pods' default gateway) */
  bridgeIP: string;
  /** gateway nodes: address on the shared internet segment (eth1) */
  publicIP?: string;
  internetVeth?: string;
}

export interface PlanPod {
  cluster: string;
  namespace: string;
  name: string;
  node: string;
  netns: string;
  ip: string;
  /** the node-side veth, in the node's namespace */
  hostVeth: string;
  image: Image;
  port: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** owning Deployment, if any */
  deployment?: string;
}

export interface PlanServicePort extends Required<Omit<WorldServicePort, 'name'>> {
  name?: string;
}

export interface PlanService {
  cluster: string;
  namespace: string;
  name: string;
  /** undefined: headless */
  clusterIP?: string;
  selector: Record<string, string>;
  ports: PlanServicePort[];
  /** endpoints not chosen by selector (kube-dns points at the world's DNS server) */
  fixedEndpoints?: string[];
}

export interface PlanDeployment {
  cluster: string;
  namespace: string;
  name: string;
  image: Image;
  replicas: number;
  port: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface PlanCluster {
  name: string;
  index: number;
  clusterCIDR: string;
  serviceCIDR: string;
  nodeCIDR: string;
  /** root-namespace bridge joining the cluster's nodes */
  underlayBridge: string;
  /** the world root's address on that underlay: DNS and metrics scrapes live here */
  rootIP: string;
  /** ClusterIP of kube-system/kube-dns */
  dnsIP: string;
  nodes: PlanNode[];
  pods: PlanPod[];
  deployments: PlanDeployment[];
  services: PlanService[];
  namespaces: string[];
}

export interface WorldPlan {
  clusters: PlanCluster[];
  internet: { cidr: string; bridge: string; rootIP: string };
  metricsPort: number;
  /** gateway daemons and node agents join the clusters */
  tunnels: boolean;
  /** the code-hosting server runs in the world root */
  githost: boolean;
  /** the mesh agent and ingress gateway run in every cluster */
  mesh: boolean;
  /** the injected pods' proxies: a sidecar process per pod, or one node-level proxy per node */
  meshDataplane?: 'sidecar' | 'node';
}

export const DNS_DOMAIN = 'cluster.local';

/** k8s-style random suffix, but derived from a seed so the same world gives the same names */
export function nameSuffix(seed: string, length = 5): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const h = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(h[i] as number) % alphabet.length];
  return out;
}

/** nth address of a CIDR as text */
export function hostAt(cidrText: string, n: number): string {
  const c = parseCidr(cidrText);
  return intToIpv4((c.network + n) >>> 0);
}

/** node slice i of a cluster CIDR */
export function sliceAt(cidrText: string, maskSize: number, i: number): string {
  const c = parseCidr(cidrText);
  return `${intToIpv4((c.network + i * 2 ** (32 - maskSize)) >>> 0)}/${maskSize}`;
}

type WorldCluster = WorldFile['clusters'][number];

/** A cluster's nodes: underlay address and veth, pod CIDR slice; gateways also a public address on the internet bridge. */
function planNodes(wc: WorldCluster, ci: number, nodeCIDR: string, internetCIDR: string): PlanNode[] {
  const internetPrefix = parseCidr(internetCIDR).prefix;
  let gatewayCount = 0;
  return wc.nodes.map((n, ni) => {
    const podCIDR = sliceAt(wc.clusterCIDR, wc.nodeCIDRMaskSize, ni);
    const node: PlanNode = {
      cluster: wc.name,
      name: n.name,
      role: n.role,
      netns: `${wc.name}.${n.name}`,
      underlayIP: hostAt(nodeCIDR, ni + 2),
      rootVeth: `c${ci}n${ni}`,
      podCIDR,
      bridgeIP: hostAt(podCIDR, 1),
    };
    if (n.role === 'gateway') {
      // 198.18.<cluster+1>.<gateway+1> in the default /16
      node.publicIP = internetPrefix <= 16 ? hostAt(internetCIDR, (ci + 1) * 256 + gatewayCount + 1) : hostAt(internetCIDR, 2 + ci * 2 + gatewayCount);
      node.internetVeth = `c${ci}g${ni}`;
      gatewayCount++;
    }
    return node;
  });
}

/** The cluster's pods and Deployments, pods placed on nodes: pinned pods first, then the rest spread over the least-loaded nodes. */
function placePods(wc: WorldCluster, cluster: PlanCluster): void {
  const nodes = cluster.nodes;
  const load = new Map(nodes.map((n) => [n.name, 0]));
  const nextIP = new Map(nodes.map((n) => [n.name, 2]));
  const vethIndex = new Map(nodes.map((n) => [n.name, 0]));
  const place = (node: string | undefined): PlanNode => {
    let target = nodes.find((n) => n.name === node);
    if (!target) {
      // least-loaded node; ties go to the first in the world file
      target = nodes.reduce((best, n) => ((load.get(n.name) ?? 0) < (load.get(best.name) ?? 0) ? n : best), nodes[0] as PlanNode);
    }
    load.set(target.name, (load.get(target.name) ?? 0) + 1);
    return target;
  };
  const addPod = (ns: string, name: string, node: PlanNode, p: Omit<PlanPod, 'cluster' | 'namespace' | 'name' | 'node' | 'netns' | 'ip' | 'hostVeth'>) => {
    const host = nextIP.get(node.name) ?? 2;
    nextIP.set(node.name, host + 1);
    const vi = vethIndex.get(node.name) ?? 0;
    vethIndex.set(node.name, vi + 1);
    cluster.pods.push({
      cluster: wc.name,
      namespace: ns,
      name,
      node: node.name,
      netns: `${wc.name}.${ns}.${name}`,
      ip: hostAt(node.podCIDR, host),
      hostVeth: `vp${vi}`,
      ...p,
    });
  };
  // pinned pods first, then the rest spread over the least-loaded nodes
  const pending: { pinned: boolean; run: () => void }[] = [];
  for (const ns of wc.workloads) {
    if (!cluster.namespaces.includes(ns.namespace)) cluster.namespaces.push(ns.namespace);
    for (const p of ns.pods) {
      pending.push({
        pinned: !!p.node,
        run: () =>
          addPod(ns.namespace, p.name, place(p.node ?? undefined), {
            image: p.image,
            port: p.port,
            labels: { ...(p.labels ?? { run: p.name }) },
            annotations: { ...(p.annotations ?? {}) },
          }),
      });
    }
    for (const d of ns.deployments) {
      const labels = { ...(d.labels ?? { app: d.name }) };
      cluster.deployments.push({
        cluster: wc.name,
        namespace: ns.namespace,
        name: d.name,
        image: d.image,
        replicas: d.replicas,
        port: d.port,
        labels,
        annotations: { ...(d.annotations ?? {}) },
      });
      const rs = nameSuffix(`${wc.name}/${ns.namespace}/${d.name}`, 10);
      for (let r = 0; r < d.replicas; r++) {
        const name = `${d.name}-${rs}-${nameSuffix(`${wc.name}/${ns.namespace}/${d.name}/${r}`)}`;
        pending.push({
          pinned: !!d.node,
          run: () =>
            addPod(ns.namespace, name, place(d.node ?? undefined), {
              image: d.image,
              port: d.port,
              labels: { ...labels },
              annotations: { ...(d.annotations ?? {}) },
              deployment: d.name,
            }),
        });
      }
    }
  }
  for (const p of pending.filter((x) => x.pinned)) p.run();
  for (const p of pending.filter((x) => !x.pinned)) p.run();
}

/** Services: .1 is kept for a future "kubernetes" Service, .10 is DNS, the rest from .11 up. */
function planServices(wc: WorldCluster, cluster: PlanCluster): void {
  cluster.services.push({
    cluster: wc.name,
    namespace: 'kube-system',
    name: 'kube-dns',
    clusterIP: cluster.dnsIP,
    selector: {},
    ports: [
      { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, targetPort: 53, protocol: 'TCP' },
    ],
    fixedEndpoints: [cluster.rootIP],
  });
  let nextService = 11;
  for (const ns of wc.workloads) {
    for (const s of ns.services) {
      cluster.services.push({
        cluster: wc.name,
        namespace: ns.namespace,
        name: s.name,
        ...(s.headless ? {} : { clusterIP: hostAt(wc.serviceCIDR, nextService++) }),
        selector: { ...(s.selector ?? { app: s.name }) },
        ports: s.ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, targetPort: p.targetPort ?? p.port, protocol: p.protocol })),
      });
    }
  }
}

export function buildPlan(world: WorldFile): WorldPlan {
  const internetCIDR = world.internetCIDR;
  const plan: WorldPlan = {
    clusters: [],
    internet: { cidr: internetCIDR, bridge: 'inet0', rootIP: hostAt(internetCIDR, 1) },
    metricsPort: world.metricsPort,
    tunnels: world.tunnels,
    githost: world.githost,
    mesh: world.mesh,
    meshDataplane: world.meshDataplane,
  };
  world.clusters.forEach((wc, ci) => {
    const nodeCIDR = nodeCidrOf(wc, ci);
    const cluster: PlanCluster = {
      name: wc.name,
      index: ci,
      clusterCIDR: wc.clusterCIDR,
      serviceCIDR: wc.serviceCIDR,
      nodeCIDR,
      underlayBridge: `ul${ci}`,
      rootIP: hostAt(nodeCIDR, 1),
      dnsIP: hostAt(wc.serviceCIDR, 10),
      nodes: planNodes(wc, ci, nodeCIDR, internetCIDR),
      pods: [],
      deployments: [],
      services: [],
      namespaces: ['default', 'kube-system'],
    };
    placePods(wc, cluster);
    planServices(wc, cluster);
    plan.clusters.push(cluster);
  });
  return plan;
}

/** pods a Service selects */
export function selectPods(cluster: PlanCluster, svc: PlanService): PlanPod[] {
  const keys = Object.entries(svc.selector);
  if (keys.length === 0) return [];
  return cluster.pods.filter((p) => p.namespace === svc.namespace && keys.every(([k, v]) => p.labels[k] === v));
}

/** The code-hosting server's port in the world root (Gitea's default). */
export const WORLD_GITHOST_PORT = 3000;
/** The control module's API port (GitOps login, gpg, app) in the world root. */
export const WORLD_CONTROL_PORT = 8080;
/** the cluster's own DNS (cluster.local) on <rootIP>; pods ask the clusterset DNS on :53, which forwards here */
export const CLUSTER_DNS_PORT = 10053;
