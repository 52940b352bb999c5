// The node agent daemon: the data plane from src/multicluster/dataplane/node-agent plus /metrics.
import { startNodeAgent, type NodeAgent } from '../../src/multicluster/dataplane/node-agent/index.js';
import { serveMetrics } from '../../src/platform/metrics/index.js';
import { agentRegistry } from './metrics.js';

export interface NodeAgentDaemon {
  agent: NodeAgent;
  metricsPort: number;
  stop(): Promise<void>;
}

export async function runNodeAgentDaemon(config: unknown): Promise<NodeAgentDaemon> {
  const agent = await startNodeAgent(config);
  const m = agent.config.metrics;
  const status = await serveMetrics(agentRegistry(agent), { port: m.port, host: m.listen }, {
    records: () => ({ node: agent.config.nodeName, gateway: agent.gateway, gatewayEpoch: agent.gatewayEpoch, counters: agent.counters }),
  });
  return {
    agent,
    metricsPort: status.port,
    async stop() {
      await status.close();
      await agent.stop();
    },
  };
}
