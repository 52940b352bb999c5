// The multicluster part of the control module, as a daemon: per joined cluster it runs the
// export/import controllers, the clusterset.local DNS server, and publishes the gateway's
// records (Endpoint, Gateway) to the cluster and the broker. /metrics beside it.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { defineConfig, type ConfigSchema } from '../../src/base/config/index.js';
import { E } from '../../src/base/errors/index.js';
import { createLogger, type Logger } from '../../src/base/log/index.js';
import type { ClustersetDns, ZoneSource } from '../../src/multicluster/control/clusterset-dns/index.js';
import { Informer } from '../../src/platform/controller/index.js';
import {
  bootstrapClusterSet, MC_KINDS, MulticlusterAgent, OPERATOR_NAMESPACE, PSK_SECRET, MulticlusterMetrics, openCurrentBroker, readEndpoint, readJoinConnection, startRecordsPublisher, type GatewayRecords,
} from '../../src/multicluster/control/clusterset/index.js';
import { connectStore, type ResourceStore } from '../../src/platform/store/index.js';
import { serveMetrics } from '../../src/platform/metrics/index.js';

export interface MulticlusterDaemonConfig {
  clusterId: string;
  /** the local world's store API; the cluster's store is `clusterId`, the broker comes from the join */
  store: { socket: string; tokenFile: string };
  dns: { enabled: boolean; listen: string; port: number; upstream?: string; rateLimitQps: number; rateLimitBurst: number };
  /** the gateway daemon's /records URL, polled and published */
  records?: { url: string; intervalMs: number; standbyUrls: string[] };
  metrics: { listen: string; port: number };
  resyncMs: number;
  /** after the join: write the join's PSK (Secret submariner-ipsec-psk, base64 text) here, mode 0600, for the gateway daemons */
  pskFile?: string;
  /** deploy the broker and join every listed cluster when this cluster has not joined (what `strait up` does, on one cluster) */
  bootstrap?: { brokerCluster: string; brokerInfoFile: string; clusters: { clusterId: string; clusterCIDR: string; serviceCIDR: string }[] };
}

const schema: ConfigSchema<MulticlusterDaemonConfig> = {
  type: 'object',
  additionalProperties: false,
  required: ['clusterId', 'store'],
  properties: {
    clusterId: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' },
    store: {
      type: 'object', additionalProperties: false, required: ['socket', 'tokenFile'],
      properties: { socket: { type: 'string', minLength: 1 }, tokenFile: { type: 'string', minLength: 1 } },
    },
    dns: {
      type: 'object', additionalProperties: false, required: [], default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        listen: { type: 'string', default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 53 },
        upstream: { type: 'string', nullable: true, pattern: '^[0-9.]+:[0-9]+$' },
        rateLimitQps: { type: 'number', minimum: 1, default: 10000 },
        rateLimitBurst: { type: 'number', minimum: 1, default: 20000 },
      },
    },
    records: {
      type: 'object', additionalProperties: false, required: ['url'], nullable: true,
      properties: {
        url: { type: 'string', pattern: '^http://' }, intervalMs: { type: 'integer', minimum: 100, default: 500 },
        // HA: the cluster's second gateway node (both publish a Gateway record; only the active one an Endpoint)
        standbyUrls: { type: 'array', items: { type: 'string', pattern: '^http://' }, default: [] },
      },
    },
    metrics: {
      type: 'object', additionalProperties: false, required: [], default: {},
      properties: { listen: { type: 'string', default: '127.0.0.1' }, port: { type: 'integer', minimum: 0, maximum: 65535, default: 9470 } },
    },
    resyncMs: { type: 'integer', minimum: 0, default: 0 },
    pskFile: { type: 'string', nullable: true, minLength: 1 },
    bootstrap: {
      type: 'object', additionalProperties: false, required: ['brokerCluster', 'brokerInfoFile', 'clusters'], nullable: true,
      properties: {
        brokerCluster: { type: 'string' },
        brokerInfoFile: { type: 'string' },
        clusters: {
          type: 'array',
          items: {
            type: 'object', additionalProperties: false, required: ['clusterId', 'clusterCIDR', 'serviceCIDR'],
            properties: { clusterId: { type: 'string' }, clusterCIDR: { type: 'string' }, serviceCIDR: { type: 'string' } },
          },
        },
      },
    },
  },
} as unknown as ConfigSchema<MulticlusterDaemonConfig>;

export const multiclusterDaemonConfig = defineConfig(schema);

/**
 * The gateway daemons take the tunnel PSK from the join: the Secret the join wrote in this
 * cluster (the broker-info file's newly generated PSK), copied to a file only they read.
 */
async function writeJoinPsk(local: ResourceStore, file: string, log: Logger): Promise<void> {
  const s = await local.get(MC_KINDS.Secret, PSK_SECRET, OPERATOR_NAMESPACE);
  const psk = (s?.['data'] as Record<string, string> | undefined)?.['psk'];
  if (!psk) {
    log.error({ secret: `${OPERATOR_NAMESPACE}/${PSK_SECRET}` }, 'the join left no PSK Secret: the gateway daemons cannot start their tunnels');
    return;
  }
  const text = psk + '\n';
  let old = '';
  try { old = readFileSync(file, 'utf8'); } catch { /* first time */ }
  if (old === text) return;
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  log.info({ file }, 'wrote the join\'s tunnel PSK for the gateway daemons');
}

export interface RunningMulticluster {
  /** the export/import controllers on the current broker connection */
  readonly agent: MulticlusterAgent;
  dns?: ClustersetDns;
  metricsPort: number;
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Whether every cluster of the bootstrap list has a current join (its broker connection
 * accepted by the broker, the broker's fingerprints of its token and PSK). A world that
 * restarts writes a new store token, so the joins of its previous run are stale.
 */
async function bootstrapCurrent(stores: ResourceStore[]): Promise<string | undefined> {
  for (const store of stores) {
    const conn = await readJoinConnection(store);
    if (!conn) return 'not joined yet';
    const r = await openCurrentBroker(conn);
    if ('stale' in r) return r.stale;
    await r.broker.close();
  }
  return undefined;
}

/** Stores may be injected (tests); otherwise they come from the configured store API. */
export async function runMulticlusterDaemon(raw: unknown, inject: { local?: ResourceStore; broker?: ResourceStore; log?: Logger } = {}): Promise<RunningMulticluster> {
  const cfg = multiclusterDaemonConfig.parse(raw, 'multicluster config');
  const log = inject.log ?? createLogger('multicluster', { cluster: cfg.clusterId });
  let token = '';
  if (!inject.local) {
    try {
      token = readFileSync(cfg.store.tokenFile, 'utf8').trim();
    } catch (err) {
      throw E.fileUnreadable(cfg.store.tokenFile, (err as Error).message);
    }
  }
  const local = inject.local ?? connectStore({ socketPath: cfg.store.socket, token, cluster: cfg.clusterId });
  if (cfg.bootstrap && !inject.broker) {
    const b = cfg.bootstrap;
    const brokerStore = connectStore({ socketPath: cfg.store.socket, token, cluster: 'broker' });
    const others = b.clusters.map((c) => ({ c, store: c.clusterId === cfg.clusterId ? local : connectStore({ socketPath: cfg.store.socket, token, cluster: c.clusterId }) }));
    try {
      const why = await bootstrapCurrent(others.map((o) => o.store));
      if (why) {
        // a first start, or a restart (new store token): deploy the broker again (new PSK) and
        // join every cluster with this run's credentials; every daemon follows its new join
        const r = await bootstrapClusterSet({
          broker: brokerStore, brokerURL: `unix://${cfg.store.socket}#broker`, brokerCluster: b.brokerCluster, token,
          clusters: others.map(({ c, store }) => ({ store, network: { clusterId: c.clusterId, networkPlugin: 'strait', clusterCIDRs: [c.clusterCIDR], serviceCIDRs: [c.serviceCIDR] } })),
        });
        writeFileSync(`${b.brokerInfoFile}.tmp`, r.brokerInfoText, { mode: 0o600 });
        renameSync(`${b.brokerInfoFile}.tmp`, b.brokerInfoFile);
        log.info({ file: b.brokerInfoFile, clusters: b.clusters.map((c) => c.clusterId), why }, 'broker deployed and clusters joined');
      }
    } finally {
      await brokerStore.close();
      for (const o of others) if (o.store !== local) await o.store.close();
    }
  }
  // wait for a current join: the broker connection is written by `strait join` (or the bootstrap above)
  let conn: { key: string; broker: ResourceStore };
  if (inject.broker) conn = { key: '', broker: inject.broker };
  else {
    let said = '';
    for (let i = 0; ; i++) {
      const found = await readJoinConnection(local).catch(() => undefined);
      const r = found ? await openCurrentBroker(found).catch((err: unknown) => ({ stale: `the broker is not reachable: ${String(err)}` })) : undefined;
      if (found && r && 'broker' in r) {
        conn = { key: found.key, broker: r.broker };
        break;
      }
      const why = r && 'stale' in r ? r.stale : 'not joined yet';
      if (why !== said) log.info({ why }, r ? 'waiting for a current join of this cluster' : 'waiting for this cluster to join a broker');
      said = why;
      await sleep(i < 50 ? 200 : 1000);
    }
  }
  if (cfg.pskFile) await writeJoinPsk(local, cfg.pskFile, log).catch((err: unknown) => log.error({ err, file: cfg.pskFile }, 'writing the tunnel PSK failed'));
  const registry = new Registry();
  const metrics = new MulticlusterMetrics(registry);
  // ready (to the world's process table) once the gateway's records are published with every
  // connection up: `strait show connections` then lists them
  let published = !cfg.records;
  const remoteEndpointsKnown = async (recs: GatewayRecords): Promise<boolean> => {
    const eps = (await local.list(MC_KINDS.Endpoint, { namespace: OPERATOR_NAMESPACE })).items.map((e) => readEndpoint(e, cfg.clusterId));
    const named = new Set(eps.filter((e) => e.type === 'remote' && e.hostname).map((e) => e.cluster));
    return recs.connections.every((c) => named.has(String(c['cluster'])));
  };
  const announce = (): void => { if (process.connected) process.send?.({ type: 'ready' }); };
  const startOn = (broker: ResourceStore) => {
    const agent = new MulticlusterAgent({ clusterId: cfg.clusterId, local, broker, metrics, log, resyncMs: cfg.resyncMs });
    agent.start();
    const publishers = cfg.records ? [cfg.records.url, ...cfg.records.standbyUrls].map((url) => startRecordsPublisher({
      local, broker,
      intervalMs: () => (published ? cfg.records!.intervalMs : Math.min(100, cfg.records!.intervalMs)),
      // bounded: a frozen gateway (SIGSTOP) must not stall its publisher
      fetchRecords: async () => (await (await fetch(url, { signal: AbortSignal.timeout(Math.max(1000, cfg.records!.intervalMs * 2)) })).json()) as GatewayRecords,
      onError: (err) => log.debug({ err, url }, 'publishing gateway records failed'),
      onPublished: (recs) => {
        const ready = (recs as { ready?: unknown }).ready === true && recs.gateway.haStatus !== 'passive';
        if (published || !ready) return;
        // ... and the remote gateways' Endpoints copied from the broker: `show connections`
        // then names each remote gateway (its GATEWAY column), not only its status and RTT
        void remoteEndpointsKnown(recs).then((known) => {
          if (known && !published) {
            published = true;
            announce();
          }
        }, () => undefined);
      },
    })) : [];
    return {
      agent,
      async stop() {
        await Promise.all(publishers.map((p) => p.stop()));
        await agent.stop();
      },
    };
  };
  let running = startOn(conn.broker);
  // follow the join: a new deploy-broker and join (or a restarted world's bootstrap) moves
  // this daemon to the new broker connection, and the gateways to the new PSK. Woken by a
  // change of the join's Secrets (a watch); a changed join that is not current yet is
  // looked at again every second until it is.
  let following = true;
  let followTimer: NodeJS.Timeout | undefined;
  let followRun: Promise<void> = Promise.resolve();
  let followBusy = false;
  let followAgain = false;
  let staleSaid = '';
  /** true: look again later (the join changed but is not current) */
  const follow = async (): Promise<boolean> => {
    const found = await readJoinConnection(local).catch(() => undefined);
    if (!found || found.key === conn.key) return false;
    const r = await openCurrentBroker(found).catch((err: unknown) => ({ stale: `the broker is not reachable: ${String(err)}` }));
    if ('stale' in r) {
      if (r.stale !== staleSaid) log.warn({ why: r.stale }, 'the join changed, but is not current: keeping the broker connection');
      staleSaid = r.stale;
      return true;
    }
    if (!following) {
      await r.broker.close();
      return false;
    }
    log.info({ brokerURL: found.url }, 'the join changed: following the new broker connection');
    await running.stop();
    await conn.broker.close().catch(() => undefined);
    conn = { key: found.key, broker: r.broker };
    running = startOn(r.broker);
    if (cfg.pskFile) await writeJoinPsk(local, cfg.pskFile, log).catch((err: unknown) => log.error({ err, file: cfg.pskFile }, 'writing the tunnel PSK failed'));
    return false;
  };
  const runFollow = (): void => {
    if (!following) return;
    if (followBusy) {
      followAgain = true;
      return;
    }
    followBusy = true;
    clearTimeout(followTimer);
    followRun = follow().catch((err: unknown) => {
      log.debug({ err }, 'reading the join failed');
      return true;
    }).then((later) => {
      followBusy = false;
      if (!following) return;
      if (followAgain) {
        followAgain = false;
        runFollow();
      } else if (later) followTimer = setTimeout(runFollow, 1000);
    });
  };
  const joinWatch = inject.broker ? undefined : new Informer(local, MC_KINDS.Secret, { namespace: OPERATOR_NAMESPACE }, {
    onList: runFollow, onEvent: runFollow, onError: (err) => log.debug({ err }, 'watching the join failed'),
  }).start();
  let dns: ClustersetDns | undefined;
  let source: ZoneSource | undefined;
  if (cfg.dns.enabled) {
    // the DNS server (and its DNS library) only where this daemon serves clusterset.local
    const { ClustersetZone, startClustersetDns, ZoneSource } = await import('../../src/multicluster/control/clusterset-dns/index.js');
    const zone = new ClustersetZone(cfg.clusterId);
    source = new ZoneSource(local, zone);
    source.start();
    const [ua, up] = cfg.dns.upstream ? cfg.dns.upstream.split(':') : [];
    dns = await startClustersetDns({
      zone, address: cfg.dns.listen, port: cfg.dns.port, registry, log,
      rateLimit: { qps: cfg.dns.rateLimitQps, burst: cfg.dns.rateLimitBurst },
      ...(ua && up ? { upstream: { address: ua, port: Number(up) } } : {}),
    });
  }
  const status = await serveMetrics(registry, { port: cfg.metrics.port, host: cfg.metrics.listen }, {
    records: () => ({ cluster: cfg.clusterId, exports: Object.fromEntries([...running.agent.exportConditions()].map(([k, v]) => [k, Object.fromEntries(v)])) }),
  });
  log.info({ dnsPort: dns?.port, metricsPort: status.port }, 'multicluster control running');
  if (published) announce();
  return {
    get agent() { return running.agent; },
    ...(dns ? { dns } : {}), metricsPort: status.port,
    async stop() {
      following = false;
      joinWatch?.stop();
      clearTimeout(followTimer);
      await followRun;
      source?.stop();
      await dns?.close();
      await running.stop();
      await status.close();
      if (!inject.broker) await conn.broker.close();
      if (!inject.local) await local.close();
    },
  };
}
