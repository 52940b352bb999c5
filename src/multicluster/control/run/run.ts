// The multicluster control of one cluster, assembled once for every place it runs (the local
// world's multicluster daemon, `strait-multicluster`, and the control module in Kubernetes
// mode): per current join of this cluster, the export/import sync with the join's broker
// (MulticlusterAgent), and the clusterset.local DNS server over what the import sync writes.
// A changed join moves the sync to the new broker connection (join-follow.ts).
import type { Registry } from 'prom-client';
import type { Logger } from '../../../base/log/index.js';
import type { BackoffPolicy } from '../../../platform/controller/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { MulticlusterAgent, MulticlusterMetrics, readJoin } from '../clusterset/index.js';
import type { ClustersetDns, ZoneSource } from '../clusterset-dns/index.js';
import { followJoin, type CurrentJoin } from './join-follow.js';

export interface ClustersetDnsSettings {
  host: string;
  port: number;
  /** where names outside clusterset.local go */
  upstream?: { address: string; port: number };
  rateLimit?: { qps: number; burst: number };
}

export interface MulticlusterRunOptions {
  local: ResourceStore;
  /** this cluster; absent: the cluster id of the join (`strait join --clusterid`) */
  clusterId?: string;
  /** a broker to use as it is (tests): no join is read or followed */
  broker?: ResourceStore;
  registry: Registry;
  log: Logger;
  resyncMs: number;
  /** a clusterset IP per ClusterSetIP import through a derived Service (default true; AgentOptions.clustersetIP) */
  clustersetIP?: boolean;
  /** the clusterset.local DNS server; absent: none */
  dns?: ClustersetDnsSettings;
  /** how the join is followed (join-follow.ts) */
  join: { watch: boolean; pollMs?: number; backoff?: BackoffPolicy };
  /** more to run on each broker connection (the gateway records); stopped before the next */
  onBroker?(broker: ResourceStore): { stop(): Promise<void> };
  /** after each new join runs (the tunnel PSK file) */
  onJoined?(): Promise<void>;
}

export interface RunningMulticlusterControl {
  /** the export/import sync on the current broker connection, once joined */
  readonly agent: MulticlusterAgent | undefined;
  readonly dns: ClustersetDns | undefined;
  /** resolves once the first join runs */
  readonly joined: Promise<void>;
  stop(): Promise<void>;
}

interface OnBroker {
  broker: ResourceStore;
  owned: boolean;
  agent: MulticlusterAgent;
  extra?: { stop(): Promise<void> };
}
interface Dns {
  clusterId: string;
  source: ZoneSource;
  server: ClustersetDns;
}

/** The clusterset.local DNS server over `local` (its DNS library loaded only where it runs). */
async function startDns(local: ResourceStore, clusterId: string, s: ClustersetDnsSettings, registry: Registry, log: Logger): Promise<Dns> {
  const { ClustersetZone, startClustersetDns, ZoneSource } = await import('../clusterset-dns/index.js');
  const zone = new ClustersetZone(clusterId);
  const source = new ZoneSource(local, zone);
  source.start();
  const server = await startClustersetDns({
    zone,
    address: s.host,
    port: s.port,
    registry,
    log,
    ...(s.rateLimit ? { rateLimit: s.rateLimit } : {}),
    ...(s.upstream ? { upstream: s.upstream } : {}),
  });
  log.info({ address: s.host, port: server.port }, 'clusterset.local DNS serving');
  return { clusterId, source, server };
}

async function stopDns(d: Dns | undefined): Promise<void> {
  d?.source.stop();
  await d?.server.close();
}

export function runMulticluster(o: MulticlusterRunOptions): RunningMulticlusterControl {
  const metrics = new MulticlusterMetrics(o.registry);
  let on: OnBroker | undefined;
  let dns: Dns | undefined;
  let joinedNow: () => void = () => undefined;
  const joined = new Promise<void>((r) => {
    joinedNow = r;
  });
  const stopOn = async (): Promise<void> => {
    await on?.extra?.stop();
    await on?.agent.stop();
    if (on?.owned) await on.broker.close().catch(() => undefined);
    on = undefined;
  };
  const onJoin = async (j: CurrentJoin, owned = true): Promise<void> => {
    const clusterId = o.clusterId ?? (await readJoin(o.local))?.clusterId;
    if (!clusterId) throw new Error('the join names no cluster id (ConfigMap submariner-operator/strait-join)');
    if (on) o.log.info({ brokerURL: j.url }, 'the join changed: following the new broker connection');
    await stopOn();
    const agent = new MulticlusterAgent({
      clusterId,
      local: o.local,
      broker: j.broker,
      metrics,
      log: o.log,
      resyncMs: o.resyncMs,
      ...(o.clustersetIP !== undefined ? { clustersetIP: o.clustersetIP } : {}),
    });
    agent.start();
    on = { broker: j.broker, owned, agent, ...(o.onBroker ? { extra: o.onBroker(j.broker) } : {}) };
    o.log.info({ cluster: clusterId, broker: j.url }, 'joined: export/import sync with the broker running');
    if (o.dns && dns?.clusterId !== clusterId) {
      await stopDns(dns);
      dns = undefined;
      dns = await startDns(o.local, clusterId, o.dns, o.registry, o.log);
    }
    await o.onJoined?.();
    joinedNow();
  };
  const follow = o.broker ? undefined : followJoin({ local: o.local, log: o.log, ...o.join, onJoin: (j) => onJoin(j) });
  const given = o.broker ? onJoin({ key: '', url: '', broker: o.broker }, false) : Promise.resolve();
  return {
    get agent() {
      return on?.agent;
    },
    get dns() {
      return dns?.server;
    },
    joined: given.then(() => joined),
    async stop() {
      await follow?.stop();
      await given.catch(() => undefined);
      await stopDns(dns);
      await stopOn();
    },
  };
}
