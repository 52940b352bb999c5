// The world supervisor: pid 1 of the world's private tree. Builds the network, fills
// each cluster's store, programs every node's service proxy, serves cluster DNS, runs
// the workloads and any other component in its process table, and reports readiness
// and state to the `strait up` process that owns it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { startRelay } from '../../mesh/dataplane/proxy/index.js';
import { renderProxyRules, syncServiceProxy } from '../service-proxy/index.js';
import { ClustersetZone, registerDnsMetrics, startClustersetDns, ZoneSource, type ClustersetDns } from '../../multicluster/control/clusterset-dns/index.js';
import { ClusterZone, startDnsServer, type DnsResolver, type RunningDnsServer } from '../cluster-dns/index.js';
import { createRegistry, serveMetrics, Gauge, type MetricsServer } from '../../platform/metrics/index.js';
import { Kinds } from '../../platform/resources/index.js';
import { openEmbeddedStore, serveStores, type KubeObject, type ResourceStore } from '../../platform/store/index.js';
import { startClusterSync } from './cluster-sync.js';
import { clusterIpAdmission } from './cluster-ip.js';
import { startPodRuntime, type PodHooks } from './pod-runtime.js';
import type { WorldFile } from '../world-file/index.js';
import { clusterObjects } from './objects.js';
import { buildPlan, CLUSTER_DNS_PORT, WORLD_CONTROL_PORT, WORLD_GITHOST_PORT, type PlanCluster, type PlanPod, type WorldPlan } from './plan.js';
import { ProcessTable, type Component } from './processes.js';
import type { WorldState } from '../../platform/cli-kit/index.js';
import { DAEMON_ENV, withDaemonFlags } from '../../base/node-flags/index.js';
import { buildTopology, mountPrivateNetnsDirs } from './topology.js';
import { serviceViews, type ServiceViews } from './views.js';

export interface WorldOptions {
  world: WorldFile;
  stateDir: string;
  log: Logger;
  /** program (node script) that runs the built-in workloads: the pod runtime (strait/echo of every pod) */
  images: { echo: string };
  /**
   * Extra components (gateway daemon, node agent, control module, code-hosting server),
   * started once the network, the service proxies, DNS and the store API are up (or, with
   * startAfter: 'network', as soon as the network is built).
   */
  components?: (plan: WorldPlan, ctx: ComponentContext) => Component[];
  /**
   * More DNS zones for a cluster's own DNS server, asked after the cluster.local zone;
   * called once the store is open (store undefined when it is not). clusterset.local is
   * not one of them: the supervisor serves it in front of the cluster's DNS.
   */
  dnsResolvers?: (cluster: PlanCluster, store: ResourceStore | undefined, plan: WorldPlan) => DnsResolver[];
  /** called with {type:'ready'|'state', state} for the owner of the world */
  notify: (msg: { type: 'ready' | 'state'; state: WorldState }) => void;
}

/** What a component needs to know about the world it runs in. */
export interface ComponentContext {
  stateDir: string;
  /** the store API (unix socket, reachable from every namespace) and its token file */
  storeSocket: string;
  storeTokenFile: string;
  metricsPort: number;
  log: Logger;
  /** environment every strait process of this world gets (STRAIT_STATE_DIR, STRAIT_STORE_*) */
  env: Record<string, string>;
  /**
   * The servers `strait up` publishes on the host's loopback, as the host reaches them
   * (http://127.0.0.1:PORT); absent when no host port was bound. A server builds the links
   * it hands out from these (the code-hosting server's baseURL).
   */
  hostURLs: {
    githost?: string;
    control?: string;
    /** the code-hosting server's host URLs of earlier runs of this state dir, which repoURLs may still name */
    githostEarlier?: string[];
  };
}

export type { WorldState } from '../../platform/cli-kit/index.js';

export interface RunningWorld {
  plan: WorldPlan;
  processes: ProcessTable;
  state(): WorldState;
  /**
   * Restart the store API as a kube-apiserver restart looks to its clients: every
   * connection and watch ends, the socket is gone for `downMs`, then the same stores (on
   * disk, unchanged) are served again with the same token (SIGUSR2 to the supervisor).
   */
  restartStoreApi(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

type ServiceState = WorldState['clusters'][number]['services'];

/** the Services a cluster's data plane serves now (from the plan, then from its store) */
function servicesOf(views: ServiceViews): ServiceState {
  const ports = new Map(views.proxy.map((p) => [`${p.namespace}/${p.name}`, p.ports.map((x) => ({ port: x.port, protocol: x.protocol }))]));
  return views.dns
    .map((d) => ({
      namespace: d.namespace,
      name: d.name,
      ...(d.clusterIP ? { clusterIP: d.clusterIP } : {}),
      ports: ports.get(`${d.namespace}/${d.name}`) ?? [],
    }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

function clusterState(c: PlanCluster, services?: ServiceState): WorldState['clusters'][number] {
  return {
    name: c.name,
    clusterCIDR: c.clusterCIDR,
    serviceCIDR: c.serviceCIDR,
    nodeCIDR: c.nodeCIDR,
    dnsIP: c.dnsIP,
    dnsServer: `${c.rootIP}:53`,
    nodes: c.nodes.map((n) => ({
      name: n.name,
      role: n.role,
      netns: n.netns,
      underlayIP: n.underlayIP,
      podCIDR: n.podCIDR,
      ...(n.publicIP ? { publicIP: n.publicIP } : {}),
    })),
    pods: c.pods.map((p) => ({ namespace: p.namespace, name: p.name, node: p.node, netns: p.netns, ip: p.ip, image: p.image })),
    services:
      services ??
      c.services.map((s) => ({
        namespace: s.namespace,
        name: s.name,
        ...(s.clusterIP ? { clusterIP: s.clusterIP } : {}),
        ports: s.ports.map((p) => ({ port: p.port, protocol: p.protocol })),
      })),
  };
}

const PRUNE_KINDS = [Kinds.EndpointSlice, Kinds.Service, Kinds.Pod, Kinds.Deployment, Kinds.Node, Kinds.Namespace];
const keyOf = (o: { kind: string; metadata: { name: string; namespace?: string } }): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** keys of the objects an object refers to by uid (owner references, EndpointSlice targets) */
function refsOf(o: KubeObject): string[] {
  const ns = o.metadata.namespace ?? '';
  return [
    ...(o.metadata.ownerReferences ?? []).map((r) => `${r.kind}/${ns}/${r.name}`),
    ...((o['endpoints'] ?? []) as { targetRef?: { kind: string; name: string; namespace?: string } }[])
      .filter((e) => e.targetRef)
      .map((e) => `${e.targetRef?.kind}/${e.targetRef?.namespace ?? ''}/${e.targetRef?.name}`),
  ];
}

/**
 * Apply the world's objects to one cluster's store; drop world objects of an earlier,
 * different world. Objects go in waves: each wave is every object whose referents
 * (owners, endpoint targets) already have their uids, written at once so the store's
 * group commit makes it one transaction (one fsync) for the wave and one for its statuses.
 */
async function registerObjects(store: ResourceStore, objs: KubeObject[]): Promise<void> {
  const uids = new Map<string, string>();
  const keys = new Set(objs.map(keyOf));
  let pending = objs.map((o) => structuredClone(o));
  while (pending.length > 0) {
    let wave = pending.filter((o) => refsOf(o).every((k) => uids.has(k) || !keys.has(k)));
    if (wave.length === 0) wave = pending; // a reference cycle: no uid to wait for
    pending = pending.filter((o) => !wave.includes(o));
    await Promise.all(
      wave.map(async (obj) => {
        const { status, ...rest } = obj;
        const meta = rest.metadata;
        for (const o of meta.ownerReferences ?? []) o.uid = uids.get(`${o.kind}/${meta.namespace ?? ''}/${o.name}`) ?? o.uid;
        for (const e of (rest['endpoints'] ?? []) as { targetRef?: { kind: string; name: string; namespace?: string; uid?: string } }[]) {
          if (e.targetRef) e.targetRef.uid = uids.get(`${e.targetRef.kind}/${e.targetRef.namespace ?? ''}/${e.targetRef.name}`) ?? e.targetRef.uid;
        }
        const applied = await store.apply(rest as KubeObject, { fieldManager: 'strait-world' });
        if (applied.metadata.uid) uids.set(keyOf(applied), applied.metadata.uid);
        if (status !== undefined) await store.updateStatus({ ...applied, status });
      }),
    );
  }
  const wanted = new Set(objs.map(keyOf));
  await Promise.all(
    PRUNE_KINDS.map(async (k) => {
      const list = await store.list({ apiVersion: k.apiVersion, kind: k.kind }, { labelSelector: 'app.kubernetes.io/managed-by=strait-world' });
      return list.items.filter((o) => !wanted.has(keyOf(o)));
    }),
  ).then((stale) =>
    Promise.all(
      PRUNE_KINDS.flatMap((k, i) =>
        (stale[i] ?? []).map((o) => store.delete({ apiVersion: k.apiVersion, kind: k.kind }, o.metadata.name, o.metadata.namespace)),
      ),
    ),
  );
}

async function openStores(opts: WorldOptions, plan: WorldPlan, objects: Map<string, KubeObject[]>, log: Logger) {
  const socket = join(opts.stateDir, 'store.sock');
  const tokenFile = join(opts.stateDir, 'store.token');
  const stores = new Map<string, ResourceStore>();
  try {
    const token = randomBytes(24).toString('hex');
    writeFileSync(tokenFile, token + '\n', { mode: 0o600 });
    for (const c of plan.clusters) {
      stores.set(c.name, openEmbeddedStore({ dir: join(opts.stateDir, 'store', c.name), admit: clusterIpAdmission(c.serviceCIDR) }));
    }
    stores.set('broker', openEmbeddedStore({ dir: join(opts.stateDir, 'store', 'broker') }));
    const t0 = performance.now();
    await Promise.all([...objects].map(([cluster, objs]) => registerObjects(stores.get(cluster) as ResourceStore, objs)));
    log.info({ ms: Math.round(performance.now() - t0), objects: [...objects.values()].reduce((n, o) => n + o.length, 0) }, 'objects registered in the stores');
    const server = await serveStores({ socketPath: socket, token, stores });
    // undefined while restartStoreApi() has it down
    return { socket, token: tokenFile, available: true as const, stores, server: server as typeof server | undefined };
  } catch (err) {
    log.warn({ err }, 'resource store not available; the world runs without it');
    for (const s of stores.values()) await s.close().catch(() => undefined);
    return { socket, token: tokenFile, available: false as const, reason: (err as Error).message, stores: new Map<string, ResourceStore>(), server: undefined };
  }
}

/** the echo pods of the world, as the pod runtime takes them */
function echoPods(
  plan: WorldPlan,
): { cluster: string; namespace: string; pod: string; node: string; netns: string; port: number; metricsPort: number; ip: string }[] {
  return plan.clusters.flatMap((c) =>
    c.pods
      .filter((p) => p.image === 'strait/echo')
      .map((p: PlanPod) => ({
        cluster: c.name,
        namespace: p.namespace,
        pod: p.name,
        node: p.node,
        netns: p.netns,
        port: p.port,
        metricsPort: plan.metricsPort,
        ip: p.ip,
      })),
  );
}

export const POD_RUNTIME = 'pod-runtime';

/**
 * The pod runtime component: started with the first echo pod, told the whole list of
 * echo pods at every start and change; sync() resolves once it applied the list (or
 * after 3 s, or at once when it is not running).
 */
function podRuntime(processes: ProcessTable, plan: WorldPlan, program: string): { sync(): Promise<void> } {
  let seq = 0;
  const acks = new Map<number, () => void>();
  const message = (): unknown => ({ type: 'pods', seq: ++seq, pods: echoPods(plan) });
  return {
    sync() {
      const pods = echoPods(plan);
      if (!processes.has(POD_RUNTIME)) {
        if (pods.length === 0) return Promise.resolve();
        processes.add({
          name: POD_RUNTIME,
          // small heaps: it holds a few sockets per pod
          command: [process.execPath, '--max-semi-space-size=1', '--max-old-space-size=64', program],
          ready: 'ipc',
          metrics: `${pods[0]?.ip}:${plan.metricsPort}`,
          hello: message,
          onMessage: (m) => {
            const ack = m as { type?: string; seq?: number };
            if (ack?.type !== 'applied') return;
            for (const [s, resolve] of acks)
              if (s <= (ack.seq ?? 0)) {
                acks.delete(s);
                resolve();
              }
          },
        });
        return Promise.resolve();
      }
      const msg = message() as { seq: number };
      if (!processes.send(POD_RUNTIME, msg)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          acks.delete(msg.seq);
          resolve();
        }, 3000);
        acks.set(msg.seq, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

/** A host port `strait up` bound in the host's namespace and handed in (fd and port). */
function hostPort(name: string): { fd: number; port: number } | undefined {
  const fd = Number(process.env[`STRAIT_${name}_FD`] ?? NaN);
  const port = Number(process.env[`STRAIT_${name}_PORT`] ?? NaN);
  return Number.isInteger(fd) && Number.isInteger(port) && port > 0 ? { fd, port } : undefined;
}

type HostPort = ReturnType<typeof hostPort>;

function componentContext(opts: WorldOptions, plan: WorldPlan, githostHost: HostPort, controlHost: HostPort): ComponentContext {
  const storeSocket = join(opts.stateDir, 'store.sock');
  const storeTokenFile = join(opts.stateDir, 'store.token');
  return {
    hostURLs: {
      ...(githostHost ? { githost: `http://127.0.0.1:${githostHost.port}` } : {}),
      ...(controlHost ? { control: `http://127.0.0.1:${controlHost.port}` } : {}),
      ...(githostHost && process.env['STRAIT_GITHOST_EARLIER_URLS']
        ? { githostEarlier: (process.env['STRAIT_GITHOST_EARLIER_URLS'] ?? '').split(',').filter((u) => /^http:\/\/127\.0\.0\.1:\d+$/.test(u)) }
        : {}),
    },
    stateDir: opts.stateDir,
    storeSocket,
    storeTokenFile,
    metricsPort: plan.metricsPort,
    log: opts.log,
    env: {
      ...DAEMON_ENV,
      STRAIT_STATE_DIR: opts.stateDir,
      STRAIT_STORE_SOCKET: storeSocket,
      STRAIT_STORE_TOKEN_FILE: storeTokenFile,
      STRAIT_METRICS_PORT: String(plan.metricsPort),
    },
  };
}

/**
 * Every cluster's service proxy (nftables in every node) and DNS: pods ask <rootIP>:53, the
 * clusterset.local server (the same one the multicluster daemon runs on bare hosts: A, SRV,
 * headless and per-pod names); it forwards every other name to the cluster's own DNS
 * (cluster.local) on <rootIP>:CLUSTER_DNS_PORT. Programmed first from the plan, then from
 * the cluster's store.
 */
class ClusterServing {
  readonly dnsServers = new Map<string, RunningDnsServer>();
  readonly clustersetZones: Map<string, ClustersetZone>;
  readonly clustersetServers = new Map<string, ClustersetDns>();
  private readonly zones: Map<string, ClusterZone>;
  /** each DNS server reads its list per query: zones added later join it */
  private readonly resolvers: Map<string, DnsResolver[]>;
  private readonly lastRules = new Map<string, string>();
  private readonly serviceStates = new Map<string, ServiceState>();
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly plan: WorldPlan,
    private readonly onServices: () => void,
  ) {
    this.zones = new Map(plan.clusters.map((c) => [c.name, new ClusterZone()]));
    this.clustersetZones = new Map(plan.clusters.map((c) => [c.name, new ClustersetZone(c.name)]));
    this.resolvers = new Map(plan.clusters.map((c) => [c.name, [this.zones.get(c.name) as ClusterZone]]));
  }

  /** Program the cluster's objects of the plan and start every cluster's DNS servers. */
  start(objects: Map<string, KubeObject[]>, log: Logger): Promise<unknown> {
    const jobs: Promise<unknown>[] = [];
    for (const c of this.plan.clusters) {
      const objs = objects.get(c.name) as KubeObject[];
      jobs.push(
        this.program(
          c,
          serviceViews(
            objs.filter((o) => o.kind === 'Service'),
            objs.filter((o) => o.kind === 'EndpointSlice'),
          ),
        ),
      );
      jobs.push(
        startDnsServer({ address: c.rootIP, port: CLUSTER_DNS_PORT, resolvers: this.resolvers.get(c.name) as DnsResolver[] }).then((s) => {
          this.dnsServers.set(c.name, s);
        }),
      );
      jobs.push(
        startClustersetDns({
          zone: this.clustersetZones.get(c.name) as ClustersetZone,
          address: c.rootIP,
          port: 53,
          log,
          upstream: { address: c.rootIP, port: CLUSTER_DNS_PORT },
        }).then((s) => {
          this.clustersetServers.set(c.name, s);
        }),
      );
    }
    return Promise.all(jobs);
  }

  /**
   * One way to program a cluster's data plane, first from the plan, then from its store;
   * one update at a time per cluster, so an older table never lands after a newer one.
   */
  program(c: PlanCluster, views: ServiceViews): Promise<void> {
    const next = (this.queues.get(c.name) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        this.zones.get(c.name)?.setServices(views.dns);
        const services = servicesOf(views);
        const changed = JSON.stringify(services) !== JSON.stringify(this.serviceStates.get(c.name));
        this.serviceStates.set(c.name, services);
        if (changed) this.onServices();
        const rules = renderProxyRules(views.proxy);
        if (this.lastRules.get(c.name) === rules) return;
        await Promise.all(c.nodes.map((n) => syncServiceProxy(n.netns, views.proxy)));
        this.lastRules.set(c.name, rules);
      });
    this.queues.set(c.name, next);
    return next;
  }

  addResolvers(cluster: string, more: DnsResolver[]): void {
    this.resolvers.get(cluster)?.push(...more);
  }

  services(cluster: string): ServiceState | undefined {
    return this.serviceStates.get(cluster);
  }

  close(): Promise<unknown> {
    return Promise.all([...this.dnsServers.values(), ...this.clustersetServers.values()].map((d) => d.close()));
  }
}

/** The supervisor's own metrics, in the world root, on every address. */
function serveWorldMetrics(plan: WorldPlan, processes: ProcessTable, serving: ClusterServing, boot: { ms?: number }): Promise<MetricsServer> {
  const registry = createRegistry('world');
  new Gauge({
    name: 'strait_world_pods',
    help: 'pods in the world',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      for (const c of plan.clusters) this.set({ cluster: c.name }, c.pods.length);
    },
  });
  new Gauge({
    name: 'strait_world_component_restarts',
    help: 'restarts of each supervised component',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      for (const s of processes.status()) this.set({ name: s.name }, s.restarts);
    },
  });
  new Gauge({
    name: 'strait_world_dns_queries',
    help: 'DNS queries answered by the cluster DNS servers',
    labelNames: ['cluster'],
    registers: [registry],
    collect() {
      for (const c of plan.clusters) this.set({ cluster: c.name }, serving.dnsServers.get(c.name)?.stats.queries ?? 0);
    },
  });
  new Gauge({
    name: 'strait_world_boot_seconds',
    help: 'time from start to ready',
    registers: [registry],
    collect() {
      if (boot.ms !== undefined) this.set(boot.ms / 1000);
    },
  });
  registerDnsMetrics(registry, () => [...serving.clustersetServers].map(([cluster, s]) => ({ labels: { cluster }, counters: s.counters })));
  return serveMetrics(registry, { port: plan.metricsPort, host: '0.0.0.0' });
}

/** With the stores open: each cluster's clusterset zone, data plane and pods follow its store. */
function followStores(plan: WorldPlan, stores: Map<string, ResourceStore>, serving: ClusterServing, hooks: PodHooks, log: Logger): { stop(): void }[] {
  const syncs: { stop(): void }[] = [];
  for (const c of plan.clusters) {
    const source = new ZoneSource(stores.get(c.name) as ResourceStore, serving.clustersetZones.get(c.name) as ClustersetZone);
    source.start();
    syncs.push(source);
  }
  for (const c of plan.clusters) {
    const cs = stores.get(c.name) as ResourceStore;
    syncs.push(startClusterSync(c, cs, log, (views) => serving.program(c, views)));
    syncs.push(startPodRuntime(c, cs, log, hooks));
  }
  return syncs;
}

type Ingress = Map<string, { relay: { close(): Promise<void> }; url: string }>;

/**
 * The host's way into the mesh: `strait up` bound 127.0.0.1:PORT in the host's namespace
 * for each cluster and handed the sockets in ("fd,fd", "port,port" in the plan's order);
 * connections go to that cluster's ingress gateway (its unix socket).
 */
async function relayIngress(plan: WorldPlan, stateDir: string, log: Logger): Promise<Ingress> {
  const ingressFds = (process.env['STRAIT_INGRESS_FD'] ?? '').split(',').filter(Boolean).map(Number);
  const ingressPorts = (process.env['STRAIT_INGRESS_PORT'] ?? '').split(',').filter(Boolean);
  const ingress: Ingress = new Map();
  if (!plan.mesh) return ingress;
  await Promise.all(
    plan.clusters.map(async (c, i) => {
      const fd = ingressFds[i];
      const port = ingressPorts[i];
      if (fd === undefined || !Number.isInteger(fd) || port === undefined) return;
      const relay = await startRelay({ fd }, join(stateDir, 'mesh', c.name, 'ingress.sock')).catch((err: unknown) => {
        log.warn({ err: String(err), cluster: c.name }, 'no host port for the ingress gateway');
        return undefined;
      });
      if (relay) ingress.set(c.name, { relay, url: `http://127.0.0.1:${port}` });
    }),
  );
  return ingress;
}

/**
 * The same for the code-hosting server (http://<rootIP>:3000) and the control module's API
 * (http://<rootIP>:8080) in the world root.
 */
function relayHostPort(plan: WorldPlan, log: Logger, what: string, bound: HostPort, port: number): Promise<{ close(): Promise<void> } | undefined> {
  return bound
    ? startRelay({ fd: bound.fd }, { host: plan.internet.rootIP, port }).catch((err: unknown) => {
        log.warn({ err: String(err) }, `no host port for the ${what}`);
        return undefined;
      })
    : Promise.resolve(undefined);
}

/** What the world's state is made of, once it runs. */
interface StateParts {
  plan: WorldPlan;
  boot: { ready: boolean; ms?: number };
  logDir: string;
  store: { socket: string; token: string; available: boolean; reason?: string };
  /** the host URLs that have a relay behind them */
  published: { githost?: string; control?: string };
  serving: ClusterServing;
  ingress: Ingress;
  processes: ProcessTable;
}

function worldState(p: StateParts): WorldState {
  const { plan, boot, store } = p;
  return {
    status: boot.ready ? 'ready' : 'starting',
    ...(boot.ms !== undefined ? { bootMs: boot.ms } : {}),
    userNamespace: process.env['STRAIT_USERNS'] === '1',
    internet: plan.internet,
    metrics: `${plan.internet.rootIP}:${plan.metricsPort}`,
    store: { socket: store.socket, token: store.token, available: store.available, ...(store.available ? {} : { reason: store.reason }) },
    logs: p.logDir,
    ...p.published,
    // the control module serves the web console under /console/ of its port (src/console)
    ...(p.published.control ? { console: `${p.published.control}/console/` } : {}),
    inWorld: {
      ...(plan.githost ? { githost: `http://${plan.internet.rootIP}:${WORLD_GITHOST_PORT}` } : {}),
      ...(plan.clusters.length > 0
        ? {
            control: `http://${plan.internet.rootIP}:${WORLD_CONTROL_PORT}`,
            console: `http://${plan.internet.rootIP}:${WORLD_CONTROL_PORT}/console/`,
          }
        : {}),
    },
    clusters: plan.clusters.map((c) => ({
      ...clusterState(c, p.serving.services(c.name)),
      ...(p.ingress.has(c.name) ? { ingress: p.ingress.get(c.name)?.url as string } : {}),
    })),
    components: p.processes.status(),
  };
}

/** How long the world's components get to be ready: 20 s, and 2 s more for each beyond ten. */
export function readyTimeoutMs(components: number): number {
  return 20_000 + 2_000 * Math.max(0, components - 10);
}

/** The running world's parts, stopped from the outside in: relays, store syncs, processes, cluster serving, metrics, stores. */
async function stopWorldParts(w: {
  ingress: Ingress;
  relays: ({ close(): Promise<void> } | undefined)[];
  syncs: { stop(): void }[];
  processes: ProcessTable;
  serving: ClusterServing;
  metricsServer: MetricsServer;
  store: Awaited<ReturnType<typeof openStores>>;
}): Promise<void> {
  for (const i of w.ingress.values()) await i.relay.close();
  for (const r of w.relays) await r?.close();
  for (const sync of w.syncs) sync.stop();
  await w.processes.stop();
  await w.serving.close();
  await w.metricsServer.close();
  await w.store.server?.close();
  for (const s of w.store.stores.values()) await s.close().catch(() => undefined);
}

/** RunningWorld.restartStoreApi: the same stores, served again after `downMs` without a server. */
async function restartStoreApi(store: Awaited<ReturnType<typeof openStores>>, downMs: number, log: Logger): Promise<void> {
  const server = store.server;
  if (!server) return;
  store.server = undefined;
  log.warn({ downMs }, 'store API restarting: every connection and watch ends');
  await server.close();
  await new Promise((r) => setTimeout(r, downMs));
  const token = readFileSync(store.token, 'utf8').trim();
  store.server = await serveStores({ socketPath: store.socket, token, stores: store.stores });
  log.info('store API serving again');
}

/** Each cluster's store followed into the network (pods, services); a started or stopped echo pod re-syncs the pod runtime. */
function followWorldStores(
  plan: WorldPlan,
  stores: Parameters<typeof followStores>[1],
  serving: ClusterServing,
  runtime: ReturnType<typeof podRuntime>,
  changed: () => void,
  log: Logger,
): ReturnType<typeof followStores> {
  return followStores(
    plan,
    stores,
    serving,
    {
      start: (_c, p) => {
        if (p.image === 'strait/echo') runtime.sync();
      },
      stop: (_c, p) => (p.image === 'strait/echo' ? runtime.sync() : Promise.resolve()),
      changed,
    },
    log,
  );
}

export async function runWorld(opts: WorldOptions): Promise<RunningWorld> {
  const t0 = performance.now();
  const { log } = opts;
  const plan = buildPlan(opts.world);
  const logDir = join(opts.stateDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const startedAt = new Date().toISOString();

  await mountPrivateNetnsDirs();
  await buildTopology(plan);
  log.info({ ms: Math.round(performance.now() - t0) }, 'network built');

  const boot: { ready: boolean; ms?: number } = { ready: false };
  // the world's parts once it is ready: from then on every change is told to the owner
  const live: { parts?: StateParts } = {};
  const changed = (): void => {
    if (live.parts) opts.notify({ type: 'state', state: worldState(live.parts) });
  };
  const processes = new ProcessTable(logDir, log, changed);
  // one process, the pod runtime, serves the built-in workload of every echo pod: it
  // makes each pod's sockets inside that pod's namespace (daemon/pod-runtime.ts)
  const runtime = podRuntime(processes, plan, opts.images.echo);
  runtime.sync();
  const githostHost = plan.githost ? hostPort('GITHOST') : undefined;
  const controlHost = plan.clusters.length > 0 ? hostPort('CONTROL') : undefined;
  const ctx = componentContext(opts, plan, githostHost, controlHost);
  // components that need only the network start now; the rest once the store API is up
  const extra = opts.components?.(plan, ctx) ?? [];
  const start = (comp: Component): void => processes.add({ ...comp, command: withDaemonFlags(comp.command), env: { ...ctx.env, ...comp.env } });
  for (const comp of extra.filter((x) => x.startAfter === 'network')) start(comp);

  const objects = new Map(plan.clusters.map((c) => [c.name, clusterObjects(c, startedAt)]));
  const serving = new ClusterServing(plan, changed);
  const serveJob = serving.start(objects, log);
  const storeJob = openStores(opts, plan, objects, log);
  await serveJob;
  const metricsServer = await serveWorldMetrics(plan, processes, serving, boot);

  const store = await storeJob;
  for (const comp of extra.filter((x) => x.startAfter !== 'network')) start(comp);
  for (const c of plan.clusters) {
    serving.addResolvers(c.name, opts.dnsResolvers?.(c, store.available ? store.stores.get(c.name) : undefined, plan) ?? []);
  }
  const syncs = store.available ? followWorldStores(plan, store.stores, serving, runtime, changed, log) : [];
  const ingress = await relayIngress(plan, opts.stateDir, log);
  const githostRelay = await relayHostPort(plan, log, 'code-hosting server', githostHost, WORLD_GITHOST_PORT);
  const controlRelay = await relayHostPort(plan, log, 'control module', controlHost, WORLD_CONTROL_PORT);
  // each component is a process to start (a Node process: some 0.3 s of CPU) on a machine
  // with few cores: a larger world is given longer (the default world: 20 s)
  await processes.waitReady(readyTimeoutMs(extra.length));
  boot.ready = true;
  boot.ms = Math.round(performance.now() - t0);
  const ready: StateParts = {
    plan,
    boot,
    logDir,
    store,
    serving,
    ingress,
    processes,
    published: {
      ...(githostRelay && ctx.hostURLs.githost ? { githost: ctx.hostURLs.githost } : {}),
      ...(controlRelay && ctx.hostURLs.control ? { control: ctx.hostURLs.control } : {}),
    },
  };
  live.parts = ready;
  const state = (): WorldState => worldState(ready);
  log.info({ bootMs: boot.ms }, 'world ready');
  opts.notify({ type: 'ready', state: state() });

  return {
    plan,
    processes,
    state,
    restartStoreApi: (downMs) => restartStoreApi(store, downMs, log),
    stop: () => stopWorldParts({ ingress, relays: [githostRelay, controlRelay], syncs, processes, serving, metricsServer, store }),
  };
}
