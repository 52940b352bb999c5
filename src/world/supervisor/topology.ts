// Builds a plan's network out of namespaces, veth pairs and bridges, inside the
// world's private tree (run by the world supervisor, never in the host namespace).
//
//   world root ns:  inet0 (198.18.0.1/16)  ul<c> (172.18.<c>.1/24 per cluster)
//     node ns:      eth0 on ul<c> (underlay), eth1 on inet0 (gateways), cbr0 (pod bridge, .1 of the node's slice)
//       pod ns:     eth0 (/32, default via the node's cbr0): every packet goes through the node's L3 and nftables
//
// Hook for the tunnel engineer: routes for remote clusters' CIDRs are not installed
// here; the node agent adds them in each node namespace (see docs/world.md).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { ipBatch, nftApply, run, setSysctls } from '../../platform/netns/index.js';
import { parseCidr } from '../../base/config/index.js';
import { E } from '../../base/errors/index.js';
import { DNS_DOMAIN, type PlanCluster, type PlanNode, type PlanPod, type WorldPlan } from './plan.js';

const prefixOf = (cidr: string): number => parseCidr(cidr).prefix;

/** tmpfs on /run/netns and /etc/netns, so `ip netns` names are private to this mount namespace */
export async function mountPrivateNetnsDirs(): Promise<void> {
  for (const dir of ['/run/netns', '/etc/netns']) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      // in a user namespace the host's /run and /etc are not ours to write
      throw E.notRoot(`creating ${dir} (${(err as Error).message}); create it once as root: sudo mkdir -p /run/netns /etc/netns;`);
    }
    await run('mount', ['-t', 'tmpfs', '-o', 'mode=0755,size=16m', 'tmpfs', dir]);
  }
}

export function resolvConf(cluster: PlanCluster, namespace: string): string {
  return [`nameserver ${cluster.dnsIP}`, `search ${namespace}.svc.${DNS_DOMAIN} svc.${DNS_DOMAIN} ${DNS_DOMAIN}`, 'options ndots:5', ''].join('\n');
}

function rootLines(plan: WorldPlan): string[] {
  const lines = ['link set lo up'];
  for (const c of plan.clusters) {
    for (const n of c.nodes) lines.push(`netns add ${n.netns}`);
    for (const p of c.pods) lines.push(`netns add ${p.netns}`);
  }
  lines.push(
    `link add ${plan.internet.bridge} type bridge`,
    `link set ${plan.internet.bridge} up`,
    `addr add ${plan.internet.rootIP}/${prefixOf(plan.internet.cidr)} dev ${plan.internet.bridge}`,
  );
  for (const c of plan.clusters) {
    lines.push(
      `link add ${c.underlayBridge} type bridge`,
      `link set ${c.underlayBridge} up`,
      `addr add ${c.rootIP}/${prefixOf(c.nodeCIDR)} dev ${c.underlayBridge}`,
    );
    for (const n of c.nodes) {
      lines.push(`link add eth0 netns ${n.netns} type veth peer name ${n.rootVeth}`, `link set ${n.rootVeth} master ${c.underlayBridge} up`);
      if (n.internetVeth) {
        lines.push(`link add eth1 netns ${n.netns} type veth peer name ${n.internetVeth}`, `link set ${n.internetVeth} master ${plan.internet.bridge} up`);
      }
    }
    for (const p of c.pods) {
      const node = c.nodes.find((n) => n.name === p.node) as PlanNode;
      lines.push(`link add eth0 netns ${p.netns} type veth peer name ${p.hostVeth} netns ${node.netns}`);
    }
  }
  return lines;
}

function nodeLines(c: PlanCluster, n: PlanNode, plan: WorldPlan): string[] {
  const lines = ['link set lo up', 'link set eth0 up', `addr add ${n.underlayIP}/${prefixOf(c.nodeCIDR)} dev eth0`];
  if (n.publicIP) lines.push('link set eth1 up', `addr add ${n.publicIP}/${prefixOf(plan.internet.cidr)} dev eth1`);
  lines.push('link add cbr0 type bridge', 'link set cbr0 up', `addr add ${n.bridgeIP}/${prefixOf(n.podCIDR)} dev cbr0`);
  for (const p of c.pods.filter((x) => x.node === n.name)) lines.push(`link set ${p.hostVeth} master cbr0 up`);
  for (const other of c.nodes) {
    if (other !== n) lines.push(`route add ${other.podCIDR} via ${other.underlayIP} dev eth0`);
  }
  // a route for the service CIDR so that locally sent packets reach the nat output hook
  lines.push(`route add ${c.serviceCIDR} via ${c.rootIP} dev eth0`);
  // the world root's internet address (code-hosting server, broker) from every node
  if (!n.publicIP) lines.push(`route add ${plan.internet.rootIP}/32 via ${c.rootIP} dev eth0`);
  return lines;
}

function podLines(p: PlanPod, node: PlanNode): string[] {
  return [
    'link set lo up',
    'link set eth0 up',
    `addr add ${p.ip}/32 dev eth0`,
    `route add ${node.bridgeIP} dev eth0 scope link`,
    `route add default via ${node.bridgeIP} dev eth0`,
  ];
}

// TCP SYNs forwarded by a node carry an MSS that fits the route they take, so pods
// (MTU 1500) talk through the tunnel (TUN MTU 1400) without relying on ICMP
const NODE_NFT = `table ip strait-node {
  chain forward {
    type filter hook forward priority mangle; policy accept;
    tcp flags syn tcp option maxseg size set rt mtu
  }
}
`;

const NODE_SYSCTLS = {
  'net.ipv4.ip_forward': 1,
  'net.ipv4.conf.all.send_redirects': 0,
  'net.ipv4.conf.default.send_redirects': 0,
  'net.ipv4.conf.all.rp_filter': 0,
  'net.ipv4.conf.default.rp_filter': 0,
};

/** Build every namespace, link, address and route of the plan. */
export async function buildTopology(plan: WorldPlan): Promise<void> {
  await ipBatch(rootLines(plan));
  const jobs: Promise<unknown>[] = [];
  for (const c of plan.clusters) {
    for (const n of c.nodes) {
      jobs.push(
        setSysctls(n.netns, NODE_SYSCTLS)
          .then(() => ipBatch(nodeLines(c, n, plan), n.netns))
          .then(() =>
            setSysctls(n.netns, { 'net.ipv4.conf.eth0.send_redirects': 0, 'net.ipv4.conf.cbr0.send_redirects': 0, 'net.ipv4.conf.eth0.rp_filter': 0 }),
          )
          .then(() => nftApply(n.netns, NODE_NFT)),
      );
    }
    for (const p of c.pods) {
      const dir = `/etc/netns/${p.netns}`;
      mkdirSync(dir, { recursive: true });
      writeFileSync(`${dir}/resolv.conf`, resolvConf(c, p.namespace));
      jobs.push(ipBatch(podLines(p, c.nodes.find((n) => n.name === p.node) as PlanNode), p.netns));
    }
  }
  await Promise.all(jobs);
  // the world root reaches every pod (DNS answers, metrics scrapes); it never forwards
  const routes: string[] = [];
  for (const c of plan.clusters) {
    for (const n of c.nodes) routes.push(`route add ${n.podCIDR} via ${n.underlayIP} dev ${c.underlayBridge}`);
    const first = c.nodes[0] as PlanNode;
    routes.push(`route add ${c.serviceCIDR} via ${first.underlayIP} dev ${c.underlayBridge}`);
  }
  await ipBatch(routes);
}

/** Add one pod to a running world: its namespace, veth to the node's bridge, address, routes, resolv.conf. */
export async function addPodNetwork(cluster: PlanCluster, pod: PlanPod): Promise<void> {
  const node = cluster.nodes.find((n) => n.name === pod.node) as PlanNode;
  await ipBatch([`netns add ${pod.netns}`, `link add eth0 netns ${pod.netns} type veth peer name ${pod.hostVeth} netns ${node.netns}`]);
  const dir = `/etc/netns/${pod.netns}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/resolv.conf`, resolvConf(cluster, pod.namespace));
  await Promise.all([ipBatch([`link set ${pod.hostVeth} master cbr0 up`], node.netns), ipBatch(podLines(pod, node), pod.netns)]);
}

/** Remove a pod's namespace (its veth pair goes with it). */
export async function removePodNetwork(pod: PlanPod): Promise<void> {
  await ipBatch([`netns del ${pod.netns}`]).catch(() => undefined);
  rmSync(`/etc/netns/${pod.netns}`, { recursive: true, force: true });
}
