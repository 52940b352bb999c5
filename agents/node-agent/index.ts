// The node agent daemon: the data plane from src/multicluster/dataplane/node-agent plus /metrics.
import { startNodeAgent, type NodeAgent } from '../../src/multicluster/dataplane/node-agent/index.js';
import { serveStatus } from '../../daemon/http-server.js';
import { agentRegistry } from './metrics.js';

export interface NodeAgentDaemon {
  agent: NodeAgent;
  metricsPort: number;
  stop(): Promise<void>;
}

export async function runNodeAgentDaemon(config: unknown): Promise<NodeAgentDaemon> {
  const agent = await startNodeAgent(config);
  const m = agent.config.metrics;
  const { server, port } = await serveStatus(m.listen, m.port, agentRegistry(agent), () => ({ node: agent.config.nodeName, gateway: agent.gateway, gatewayEpoch: agent.gatewayEpoch, counters: agent.counters }));
  return {
    agent,
    metricsPort: port,
    async stop() {
      server.close();
      await agent.stop();
    },
  };
}
