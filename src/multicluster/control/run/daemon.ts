// The multicluster daemon (`strait-multicluster`, one per cluster of the local world): the
// multicluster control of run.ts on the world's store API, the gateway's records published,
// the join's tunnel PSK written for the gateway daemons, the broker deployed and every cluster
// joined on the first cluster (bootstrap), and /metrics beside it.
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { E } from '../../../base/errors/index.js';
import { createLogger, type Logger } from '../../../base/log/index.js';
import { serveMetrics } from '../../../platform/metrics/index.js';
import { connectStore, type ResourceStore } from '../../../platform/store/index.js';
import type { MulticlusterAgent } from '../clusterset/index.js';
import type { ClustersetDns } from '../clusterset-dns/index.js';
import { bootstrapWorldJoins } from './bootstrap.js';
import { multiclusterDaemonConfig, type MulticlusterDaemonConfig } from './config.js';
import { gatewayRecordsPublishing, writeJoinPsk } from './records.js';
import { runMulticluster, type ClustersetDnsSettings } from './run.js';

export interface RunningMulticluster {
  /** the export/import controllers on the current broker connection */
  readonly agent: MulticlusterAgent;
  dns?: ClustersetDns;
  metricsPort: number;
  stop(): Promise<void>;
}

function readToken(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw E.fileUnreadable(file, (err as Error).message);
  }
}

function dnsSettings(d: MulticlusterDaemonConfig['dns']): ClustersetDnsSettings | undefined {
  if (!d.enabled) return undefined;
  const [ua, up] = d.upstream ? d.upstream.split(':') : [];
  return {
    host: d.listen,
    port: d.port,
    rateLimit: { qps: d.rateLimitQps, burst: d.rateLimitBurst },
    ...(ua && up ? { upstream: { address: ua, port: Number(up) } } : {}),
  };
}

/** Stores may be injected (tests); otherwise they come from the configured store API. */
export async function runMulticlusterDaemon(
  raw: unknown,
  inject: { local?: ResourceStore; broker?: ResourceStore; log?: Logger } = {},
): Promise<RunningMulticluster> {
  const cfg = multiclusterDaemonConfig.parse(raw, 'multicluster config');
  const log = inject.log ?? createLogger('multicluster', { cluster: cfg.clusterId });
  const token = inject.local ? '' : readToken(cfg.store.tokenFile);
  const local = inject.local ?? connectStore({ socketPath: cfg.store.socket, token, cluster: cfg.clusterId });
  if (cfg.bootstrap && !inject.broker) await bootstrapWorldJoins(cfg, cfg.bootstrap, local, token, log);
  const registry = new Registry();
  const announce = (): void => {
    if (process.connected) process.send?.({ type: 'ready' });
  };
  const records = gatewayRecordsPublishing(cfg.records, local, cfg.clusterId, log, announce);
  const pskFile = cfg.pskFile;
  const dns = dnsSettings(cfg.dns);
  const mc = runMulticluster({
    local,
    clusterId: cfg.clusterId,
    registry,
    log,
    resyncMs: cfg.resyncMs,
    clustersetIP: cfg.clustersetIP,
    join: { watch: true },
    ...(inject.broker ? { broker: inject.broker } : {}),
    ...(dns ? { dns } : {}),
    onBroker: (broker) => records.startOn(broker),
    ...(pskFile
      ? { onJoined: () => writeJoinPsk(local, pskFile, log).catch((err: unknown) => log.error({ err, file: pskFile }, 'writing the tunnel PSK failed')) }
      : {}),
  });
  await mc.joined;
  const agent = (): MulticlusterAgent => mc.agent as MulticlusterAgent;
  const status = await serveMetrics(
    registry,
    { port: cfg.metrics.port, host: cfg.metrics.listen },
    {
      records: () => ({ cluster: cfg.clusterId, exports: Object.fromEntries([...agent().exportConditions()].map(([k, v]) => [k, Object.fromEntries(v)])) }),
    },
  );
  log.info({ dnsPort: mc.dns?.port, metricsPort: status.port }, 'multicluster control running');
  if (records.published) announce();
  return {
    get agent() {
      return agent();
    },
    ...(mc.dns ? { dns: mc.dns } : {}),
    metricsPort: status.port,
    async stop() {
      await mc.stop();
      await status.close();
      if (!inject.local) await local.close();
    },
  };
}
