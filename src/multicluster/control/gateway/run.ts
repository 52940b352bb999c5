// The gateway daemon: the data plane of src/multicluster/dataplane/gateway plus /metrics and /records.
import { haInKubernetes, startGateway, type Gateway, type GatewayOptions } from '../../dataplane/gateway/index.js';
import type { ResourceStore } from '../../../platform/store/index.js';
import { preloadKubernetesClient } from '../../../platform/kube-preload/index.js';
import { serveMetrics } from '../../../platform/metrics/index.js';
import { gatewayRegistry } from './metrics.js';

export interface GatewayDaemon {
  gateway: Gateway;
  /** HA (two gateway nodes): the lease elector, when `ha` is configured */
  ha?: { elector: { isActive: boolean; holder: string | undefined; epoch: number } };
  metricsPort: number;
  stop(): Promise<void>;
}

/** Everything the store/CLI publishes about this gateway, as plain objects. */
export function gatewayRecords(g: Gateway): {
  endpoint: ReturnType<Gateway['endpointRecord']>;
  connections: ReturnType<Gateway['connectionRecords']>;
  gateway: ReturnType<Gateway['gatewayRecord']>;
  drops: Record<string, number>;
  ha?: { epoch: number; activeAddress: string | null; activeSince: string | null };
  /** every tunnel of the active gateway connected with a first RTT sample, or a passive one that knows the active one */
  ready: boolean;
  /** the bulk data path's native thread: whether it runs (else why not) and what it did */
  nativePath: { running: boolean; reason: string; stats: ReturnType<Gateway['nativePathStats']> | null };
} {
  const stats = g.nativePathStats();
  const conns = g.connectionRecords();
  return {
    nativePath: { running: stats !== undefined, reason: g.nativePathReason, stats: stats ?? null },
    ready: g.haStatus === 'passive' ? g.activeAddress !== undefined : !g.isFenced && conns.every((c) => c.status === 'connected' && c.rttAvg !== ''),
    endpoint: g.endpointRecord(),
    connections: conns,
    gateway: g.gatewayRecord(),
    drops: { ...g.tunnel.counters.drops },
    ...(g.config.ha
      ? {
          ha: {
            epoch: g.haEpoch,
            activeAddress: g.haStatus === 'active' ? (g.config.ha.members.find((m) => m.name === g.config.name)?.address ?? null) : (g.activeAddress ?? null),
            activeSince: g.activeSince ? new Date(g.activeSince).toISOString() : null,
          },
        }
      : {}),
  };
}

export interface GatewayDaemonOptions extends GatewayOptions {
  /** HA: this gateway lost the lease while active (default: exit 75, the supervisor restarts it passive) */
  onHaLost?: () => void;
  log?: (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;
  /** nodesFrom: kubernetes: the store the Node objects are read from (default: the API server) */
  nodeStore?: ResourceStore;
}

export async function runGatewayDaemon(config: unknown, opts: GatewayDaemonOptions = {}): Promise<GatewayDaemon> {
  const log =
    opts.log ?? ((level, msg, extra) => console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', level, msg, ...extra })));
  // HA and the Node objects: their modules (the store client) are loaded only when configured
  // (a single gateway never needs them), and loaded now, while a rolling update's successor
  // waits for the node's ports in startGateway: loaded after it, on a busy node, they held
  // the new active gateway back for 3 s after it had the ports (real clusters, 2026-11-29)
  const declared = (k: string): unknown => (config && typeof config === 'object' ? (config as Record<string, unknown>)[k] : undefined);
  const haModule = declared('ha') !== undefined ? import('../gateway-ha/index.js') : undefined;
  const nodesModule = declared('nodesFrom') === 'kubernetes' ? import('./nodes.js') : undefined;
  // (awaited below; a failed load is that await's error, not an unhandled rejection meanwhile)
  for (const m of [haModule, nodesModule]) m?.catch(() => undefined);
  // ... and the Kubernetes client both open their store with, in Kubernetes mode
  const haKubeconfig = (declared('ha') as { kubernetes?: { kubeconfig?: unknown } } | undefined)?.kubernetes?.kubeconfig;
  if (nodesModule || (haModule && haInKubernetes(haKubeconfig, process.env)))
    preloadKubernetesClient(typeof haKubeconfig === 'string' ? haKubeconfig : undefined);
  const gateway = await startGateway(config, { onWarning: (msg) => log('warn', msg), ...opts });
  const m = gateway.config.metrics;
  const status = await serveMetrics(gatewayRegistry(gateway), { port: m.port, host: m.listen }, { records: () => gatewayRecords(gateway) });
  const ha = gateway.config.ha
    ? await (await (haModule ?? import('../gateway-ha/index.js'))).startGatewayHa(gateway, log, opts.onHaLost ?? (() => process.exit(75)), process.env, () =>
        opts.handover ? opts.handover.successorWaiting() : Promise.resolve(false),
      )
    : undefined;
  // Kubernetes mode: the node agents that may send VXLAN, from the Node objects
  const nodes =
    gateway.config.nodesFrom === 'kubernetes' ? (await (nodesModule ?? import('./nodes.js'))).startNodeSync(gateway, log, opts.nodeStore) : undefined;
  return {
    gateway,
    metricsPort: status.port,
    ...(ha ? { ha } : {}),
    async stop() {
      nodes?.stop();
      // the node's ports (the data path, /metrics) let go as soon as the lease is decided, before
      // the records and stores close: a rolling update's successor waits for them
      let ports: Promise<void> | undefined;
      const letGo = (): Promise<void> => (ports ??= status.close().finally(() => gateway.stop()));
      await ha?.stop(letGo);
      await letGo();
    },
  };
}
