// The gateway's records (Endpoint, Gateway, connections), polled from the gateway daemons'
// /records and published to the cluster and the broker, and the tunnel PSK the gateways take
// from the join. Readiness (to the world's process table): the records published with every
// connection up, and the remote gateways' Endpoints copied from the broker, so that
// `strait show connections` names each remote gateway (its GATEWAY column).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../../../base/log/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { MC_KINDS, OPERATOR_NAMESPACE, PSK_SECRET, readEndpoint, startRecordsPublisher, type GatewayRecords } from '../clusterset/index.js';
import type { MulticlusterDaemonConfig } from './config.js';

type RecordsConfig = NonNullable<MulticlusterDaemonConfig['records']>;

export interface GatewayRecordsPublishing {
  /** true once published as readiness asks (at once without records) */
  readonly published: boolean;
  /** the publishers on one broker connection */
  startOn(broker: ResourceStore): { stop(): Promise<void> };
}

async function remoteEndpointsKnown(local: ResourceStore, clusterId: string, recs: GatewayRecords): Promise<boolean> {
  const eps = (await local.list(MC_KINDS.Endpoint, { namespace: OPERATOR_NAMESPACE })).items.map((e) => readEndpoint(e, clusterId));
  const named = new Set(eps.filter((e) => e.type === 'remote' && e.hostname).map((e) => e.cluster));
  return recs.connections.every((c) => named.has(String(c['cluster'])));
}

export function gatewayRecordsPublishing(
  cfg: RecordsConfig | undefined,
  local: ResourceStore,
  clusterId: string,
  log: Logger,
  onReady: () => void,
): GatewayRecordsPublishing {
  let published = !cfg;
  const onPublished = (recs: GatewayRecords): void => {
    const ready = (recs as { ready?: unknown }).ready === true && recs.gateway.haStatus !== 'passive';
    if (published || !ready) return;
    void remoteEndpointsKnown(local, clusterId, recs).then(
      (known) => {
        if (known && !published) {
          published = true;
          onReady();
        }
      },
      () => undefined,
    );
  };
  const startOn = (broker: ResourceStore): { stop(): Promise<void> } => {
    const publishers = cfg
      ? [cfg.url, ...cfg.standbyUrls].map((url) =>
          startRecordsPublisher({
            local,
            broker,
            intervalMs: () => (published ? cfg.intervalMs : Math.min(100, cfg.intervalMs)),
            // bounded: a frozen gateway (SIGSTOP) must not stall its publisher
            fetchRecords: async () => (await (await fetch(url, { signal: AbortSignal.timeout(Math.max(1000, cfg.intervalMs * 2)) })).json()) as GatewayRecords,
            onError: (err) => log.debug({ err, url }, 'publishing gateway records failed'),
            onPublished,
          }),
        )
      : [];
    return {
      stop: async () => {
        await Promise.all(publishers.map((p) => p.stop()));
      },
    };
  };
  return {
    get published() {
      return published;
    },
    startOn,
  };
}

/**
 * The gateway daemons take the tunnel PSK from the join: the Secret the join wrote in this
 * cluster (the broker-info file's newly generated PSK), copied to a file only they read.
 */
export async function writeJoinPsk(local: ResourceStore, file: string, log: Logger): Promise<void> {
  const s = await local.get(MC_KINDS.Secret, PSK_SECRET, OPERATOR_NAMESPACE);
  const psk = (s?.['data'] as Record<string, string> | undefined)?.['psk'];
  if (!psk) {
    log.error({ secret: `${OPERATOR_NAMESPACE}/${PSK_SECRET}` }, 'the join left no PSK Secret: the gateway daemons cannot start their tunnels');
    return;
  }
  const text = psk + '\n';
  let old = '';
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    /* first time */
  }
  if (old === text) return;
  writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  log.info({ file }, "wrote the join's tunnel PSK for the gateway daemons");
}
