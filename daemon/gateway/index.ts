// The gateway daemon: the data plane from src/dataplane/gateway plus /metrics and /records.
import { startGateway, type Gateway, type GatewayOptions } from '../../src/dataplane/gateway/index.js';
import { serveStatus } from '../http-server.js';
import { gatewayRegistry } from './metrics.js';

export interface GatewayDaemon {
  gateway: Gateway;
  metricsPort: number;
  stop(): Promise<void>;
}

/** Everything the store/CLI publishes about this gateway, as plain objects. */
export function gatewayRecords(g: Gateway): { endpoint: ReturnType<Gateway['endpointRecord']>; connections: ReturnType<Gateway['connectionRecords']>; gateway: ReturnType<Gateway['gatewayRecord']>; drops: Record<string, number> } {
  return { endpoint: g.endpointRecord(), connections: g.connectionRecords(), gateway: g.gatewayRecord(), drops: { ...g.tunnel.counters.drops } };
}

export async function runGatewayDaemon(config: unknown, opts: GatewayOptions = {}): Promise<GatewayDaemon> {
  const gateway = await startGateway(config, opts);
  const m = gateway.config.metrics;
  const { server, port } = await serveStatus(m.listen, m.port, gatewayRegistry(gateway), () => gatewayRecords(gateway));
  return {
    gateway,
    metricsPort: port,
    async stop() {
      server.close();
      await gateway.stop();
    },
  };
}
