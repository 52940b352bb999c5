// The processes the world runs besides its workloads. Add an entry here for each
// daemon that belongs in the local world; the world's process table starts it in the
// given network namespace once the network, service proxies, DNS and the store API
// are up, restarts it with backoff, and writes its output to <state>/logs/<name>.log.
//
// Every component gets in its environment: STRAIT_STATE_DIR, STRAIT_STORE_SOCKET,
// STRAIT_STORE_TOKEN_FILE (connectStoreFromFiles), STRAIT_METRICS_PORT, plus its own
// `env`. A Node component should send `process.send({ type: 'ready' })` when it serves
// and set `ready: 'ipc'`; others use `ready: 'started'` or an HTTP probe.
//
// Today: the tunnel (docs/gateway-and-agent.md). The gateway node of each cluster
// runs the gateway daemon (PSK tunnels to the other clusters' gateways over the
// internet segment, VXLAN endpoint for its cluster's agents); every other node runs a
// node agent that routes the other clusters' cluster and service CIDRs into its TUN
// device and over VXLAN to that gateway. A cluster with two gateway nodes runs the
// gateway daemon on both (HA: a Lease in the cluster's store picks the active one).
// The tunnel PSK is the join's (broker-info), in <state>/tunnel/<cluster>.psk.
// And the code-hosting server (docs/githost.md) in the world root, at
// http://198.18.0.1:3000 for every pod and node, and the control module of the first
// cluster (docs/gitops.md) at http://198.18.0.1:8080. And the mesh (docs/mesh.md): per cluster
// the mesh agent in the world root and the ingress gateway on the gateway node.
import { accessSync, constants, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WORLD_CONTROL_PORT,
  WORLD_GITHOST_PORT,
  type Component,
  type ComponentContext,
  type PlanCluster,
  type PlanNode,
  type WorldPlan,
} from '../supervisor/index.js';
import { meshComponents } from './mesh.js';

/** absolute path of a compiled process entry (dist/daemon/..., dist/agents/...) */
export const entry = (rel: string): string => fileURLToPath(new URL(`../../../${rel}`, import.meta.url));

const activeGateway = (c: PlanCluster): PlanNode | undefined => c.nodes.find((n) => n.role === 'gateway');
/** the gateway nodes of a cluster with a public IP: one, or two (HA, the first is where the lease usually starts) */
const gatewaysOf = (c: PlanCluster): PlanNode[] => c.nodes.filter((n) => n.role === 'gateway' && n.publicIP);
/** the tunnel PSK of a cluster: the join's, copied from its Secret by the cluster's multicluster daemon */
const pskFileOf = (ctx: ComponentContext, c: PlanCluster): string => join(ctx.stateDir, 'tunnel', `${c.name}.psk`);
const subnetsOf = (c: PlanCluster): string[] => [c.clusterCIDR, c.serviceCIDR];

/** TUN devices need /dev/net/tun; in a user namespace only when its mode lets everyone open it */
function tunReason(): string | undefined {
  try {
    accessSync('/dev/net/tun', constants.R_OK | constants.W_OK);
    return undefined;
  } catch (err) {
    return `/dev/net/tun: ${(err as Error).message}`;
  }
}

/** The configuration file of the gateway daemon on `gw`, one of the gateway nodes `gws` of cluster `c`. */
function gatewayConfig(ctx: ComponentContext, c: PlanCluster, gw: PlanNode, gws: PlanNode[], others: PlanCluster[]): Record<string, unknown> {
  return {
    clusterId: c.name,
    name: gw.name,
    // the join's PSK (broker-info), written by this cluster's multicluster daemon once joined
    pskFile: pskFileOf(ctx, c),
    localSubnets: subnetsOf(c),
    tunnel: { listen: gw.publicIP, publicIP: gw.publicIP, privateIP: gw.underlayIP },
    vxlan: { listen: gw.underlayIP },
    peers: others.map((o) => {
      const [a, ...standby] = gatewaysOf(o);
      return { clusterId: o.name, endpoint: a?.publicIP as string, standby: standby.map((x) => x.publicIP as string), subnets: subnetsOf(o) };
    }),
    nodes: c.nodes.filter((n) => n !== gw).map((n) => ({ address: n.underlayIP, podCIDRs: [n.podCIDR] })),
    // as deploy/ runs it: the peers' subnets are kept out of the service proxy's masquerade
    kubeProxyReturnPath: true,
    metrics: { listen: '0.0.0.0', port: ctx.metricsPort },
    // the peer gateway starts at the same moment: retry a lost first initiation quickly
    timers: { rekeyTimeoutMs: 500, handshakeAttempts: 20 },
    // two gateway nodes: the lease in the cluster's store says which one is active
    ...(gws.length > 1
      ? {
          ha: {
            members: gws.map((g) => ({ name: g.name, address: g.underlayIP })),
            // failover within 1 s also when the active one freezes (a dead one is seen at once)
            leaseDurationMs: 700,
            renewMs: 150,
            store: { socket: ctx.storeSocket, tokenFile: ctx.storeTokenFile, cluster: c.name },
          },
        }
      : {}),
  };
}

function tunnelComponents(plan: WorldPlan, ctx: ComponentContext): Component[] {
  const dir = join(ctx.stateDir, 'tunnel');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // a PSK left by an earlier run is not this run's: the world joins again with its new store
  // token (a new PSK), and the gateways wait for the multicluster daemon to write that one
  for (const c of plan.clusters) rmSync(pskFileOf(ctx, c), { force: true });
  const noTun = tunReason();
  if (noTun) {
    ctx.log.warn({ reason: noTun }, 'no tunnels between the clusters: TUN devices cannot be opened (run as root, or chmod 0666 /dev/net/tun)');
    return [];
  }
  const out: Component[] = [];
  for (const c of plan.clusters) {
    const gws = gatewaysOf(c);
    const first = gws[0];
    if (!first) continue;
    const others = plan.clusters.filter((o) => o !== c && gatewaysOf(o).length > 0);
    for (const gw of gws) {
      const gwConfig = gatewayConfig(ctx, c, gw, gws, others);
      const gwFile = join(dir, gw === first ? `${c.name}.gateway.json` : `${c.name}.${gw.name}.gateway.json`);
      writeFileSync(gwFile, JSON.stringify(gwConfig, null, 2) + '\n', { mode: 0o600 });
      out.push({
        name: `${c.name}.${gw.name}.gateway`,
        netns: gw.netns,
        command: [process.execPath, entry('daemon/gateway/main.js'), '--config', gwFile],
        startAfter: 'network',
        env: { STRAIT_CLUSTER: c.name, STRAIT_NODE: gw.name },
        // ready when every peer tunnel is up (a passive gateway: when it knows the active one)
        ready: { http: `http://${gw.underlayIP}:${ctx.metricsPort}/records`, match: '"ready":true' },
        metrics: `${gw.underlayIP}:${ctx.metricsPort}`,
      });
    }
    const remote = others.flatMap(subnetsOf);
    if (remote.length === 0) continue;
    for (const n of c.nodes.filter((x) => x.role !== 'gateway')) {
      const agentConfig = {
        nodeName: n.name,
        remoteSubnets: remote,
        // HA: the other gateway node's announcement (when it takes the lease) moves the agent there
        gateway: { address: first.underlayIP, standby: gws.slice(1).map((g) => g.underlayIP) },
        vxlan: { listen: n.underlayIP },
        // a remote connection to a ClusterIP is DNATed by the gateway node's service proxy: the
        // endpoint's reply goes back through that node's conntrack (un-DNAT), not into this TUN
        kubeProxyReturnPath: { enabled: true },
        metrics: { listen: '0.0.0.0', port: ctx.metricsPort },
      };
      const file = join(dir, `${c.name}.${n.name}.agent.json`);
      writeFileSync(file, JSON.stringify(agentConfig, null, 2) + '\n');
      out.push({
        name: `${c.name}.${n.name}.node-agent`,
        netns: n.netns,
        command: [process.execPath, entry('agents/node-agent/main.js'), '--config', file],
        startAfter: 'network',
        env: { STRAIT_CLUSTER: c.name, STRAIT_NODE: n.name },
        ready: { http: `http://${n.underlayIP}:${ctx.metricsPort}/metrics` },
        metrics: `${n.underlayIP}:${ctx.metricsPort}`,
      });
    }
  }
  return out;
}

/** The code-hosting server, in the world root: http://198.18.0.1:3000 from every pod and node. */
function githostComponent(plan: WorldPlan, ctx: ComponentContext): Component {
  const port = WORLD_GITHOST_PORT;
  const file = join(ctx.stateDir, 'githost-world.json');
  writeFileSync(
    file,
    JSON.stringify(
      {
        // its public address (Gitea's ROOT_URL): the links it hands out (clone_url, html_url,
        // the API's error links) name the host's loopback port when `strait up` published one,
        // since people use them from the host; inside the world it is http://198.18.0.1:3000
        host: '0.0.0.0',
        port,
        baseURL: ctx.hostURLs.githost ?? `http://${plan.internet.rootIP}:${port}`,
        allowLocalNetworks: true,
        allowImportLocal: true,
        // pushes reach the control module at once (docs/gitops.md)
        pushWebhooks: [`http://127.0.0.1:${CONTROL_PORT}/api/webhook`],
      },
      null,
      2,
    ) + '\n',
  );
  return {
    name: 'githost',
    command: [process.execPath, entry('daemon/world-githost.js'), '--state-dir', ctx.stateDir, '--config', file],
    ready: 'ipc',
    metrics: `${plan.internet.rootIP}:${ctx.metricsPort + 1}`,
    env: { STRAIT_METRICS_PORT: String(ctx.metricsPort + 1) },
    startAfter: 'network',
  };
}

const CONTROL_PORT = WORLD_CONTROL_PORT;

/**
 * The control module of the first cluster (cluster-a): GitOps sync with signature
 * enforcement, key store and the login/gpg API on http://198.18.0.1:8080 in the world
 * root (plain HTTP inside the world's private namespaces). Destinations
 * https://kubernetes.default.svc (its own cluster) and https://<cluster> for the others.
 */
function controlComponent(plan: WorldPlan, ctx: ComponentContext): Component | undefined {
  const own = plan.clusters[0];
  if (!own) return undefined;
  const dir = join(ctx.stateDir, 'control');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return {
    name: `${own.name}.control`,
    command: [
      process.execPath,
      entry('daemon/control/main.js'),
      '--state-dir',
      dir,
      '--store-socket',
      ctx.storeSocket,
      '--store-token-file',
      ctx.storeTokenFile,
      '--cluster',
      own.name,
      '--insecure',
      '--listen',
      `0.0.0.0:${CONTROL_PORT}`,
      '--metrics-listen',
      `0.0.0.0:${ctx.metricsPort + 2}`,
    ],
    ready: 'ipc',
    metrics: `${plan.internet.rootIP}:${ctx.metricsPort + 2}`,
    env: {
      STRAIT_CLUSTER: own.name,
      // repoURLs copied from the code-hosting server's links name its host URL, this run's or
      // an earlier run's (when its port was taken): git fetches them from inside the world
      // (url.<inWorld>.insteadOf <host URL>, one value per URL, git-config(1))
      ...(ctx.hostURLs.githost && plan.githost
        ? gitInsteadOf(`http://${plan.internet.rootIP}:${WORLD_GITHOST_PORT}/`, [ctx.hostURLs.githost, ...(ctx.hostURLs.githostEarlier ?? [])])
        : {}),
    },
  };
}

/** git-config(1) entries through the environment: `url.<base>.insteadOf` once per host URL */
function gitInsteadOf(base: string, urls: string[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(urls.length) };
  urls.forEach((u, i) => {
    env[`GIT_CONFIG_KEY_${i}`] = `url.${base}.insteadOf`;
    env[`GIT_CONFIG_VALUE_${i}`] = `${u}/`;
  });
  return env;
}

/**
 * Multicluster control (docs/multicluster.md), one per cluster in its gateway node: the
 * export/import controllers, and publishing the gateway's records. The first cluster's
 * deploys the broker and joins every cluster (<state>/broker-info.subm).
 */
function multiclusterComponents(plan: WorldPlan, ctx: ComponentContext, gatewaysRun: boolean): Component[] {
  const out: Component[] = [];
  const first = plan.clusters[0];
  for (const c of plan.clusters) {
    const gw = activeGateway(c);
    const cfg = {
      clusterId: c.name,
      store: { socket: ctx.storeSocket, tokenFile: ctx.storeTokenFile },
      dns: { enabled: false },
      // the gateways' records, when gateways run (no TUN device: none, and nothing to wait for)
      ...(gw && gatewaysRun
        ? {
            records: {
              url: `http://${gw.underlayIP}:${ctx.metricsPort}/records`,
              standbyUrls: gatewaysOf(c)
                .filter((g) => g !== gw)
                .map((g) => `http://${g.underlayIP}:${ctx.metricsPort}/records`),
            },
            pskFile: pskFileOf(ctx, c),
          }
        : {}),
      metrics: { listen: gw ? gw.underlayIP : '127.0.0.1', port: ctx.metricsPort + 2 },
      ...(c === first
        ? {
            bootstrap: {
              brokerCluster: c.name,
              brokerInfoFile: join(ctx.stateDir, 'broker-info.subm'),
              clusters: plan.clusters.map((x) => ({ clusterId: x.name, clusterCIDR: x.clusterCIDR, serviceCIDR: x.serviceCIDR })),
            },
          }
        : {}),
    };
    const file = join(ctx.stateDir, `${c.name}.multicluster.json`);
    writeFileSync(file, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
    out.push({
      name: `${c.name}.multicluster`,
      ...(gw ? { netns: gw.netns } : {}),
      command: [process.execPath, entry('daemon/multicluster/main.js'), '--config', file],
      env: { STRAIT_CLUSTER: c.name },
      ready: 'ipc',
      ...(gw ? { metrics: `${gw.underlayIP}:${ctx.metricsPort + 2}` } : {}),
    });
  }
  return out;
}

export function worldComponents(plan: WorldPlan, ctx: ComponentContext): Component[] {
  const tunnels = plan.tunnels ? tunnelComponents(plan, ctx) : [];
  return [
    ...tunnels,
    ...(plan.githost ? [githostComponent(plan, ctx)] : []),
    ...multiclusterComponents(plan, ctx, tunnels.length > 0),
    ...[controlComponent(plan, ctx)].filter((c): c is Component => c !== undefined),
    ...(plan.mesh ? meshComponents(plan, ctx, entry).map((c) => ({ ...c, startAfter: 'store' as const })) : []),
  ];
}
