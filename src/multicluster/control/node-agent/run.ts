// The node agent daemon: the data plane from src/multicluster/dataplane/node-agent plus /metrics.
import type { Handover } from '../../dataplane/handover/index.js';
import { startNodeAgent, type NodeAgent } from '../../dataplane/node-agent/index.js';
import { serveMetrics } from '../../../platform/metrics/index.js';
import { agentRegistry } from './metrics.js';

export interface NodeAgentDaemon {
  agent: NodeAgent;
  metricsPort: number;
  stop(): Promise<void>;
}

/**
 * The node's name: the file's nodeName, else $STRAIT_NODE_NAME (deploy/node-agent.yaml sets it
 * from the Downward API's spec.nodeName), else the schema's default 'node'. As the gateway does.
 */
export function withNodeName(config: unknown, nodeName: string | undefined): unknown {
  if (!nodeName || config === null || typeof config !== 'object' || Array.isArray(config)) return config;
  if ((config as { nodeName?: unknown }).nodeName !== undefined) return config;
  return { ...(config as Record<string, unknown>), nodeName };
}

export async function runNodeAgentDaemon(config: unknown, handover?: Handover): Promise<NodeAgentDaemon> {
  const agent = await startNodeAgent(config, handover);
  const m = agent.config.metrics;
  const status = await serveMetrics(
    agentRegistry(agent),
    { port: m.port, host: m.listen },
    {
      records: () => ({
        node: agent.config.nodeName,
        gateway: agent.gateway,
        gatewayEpoch: agent.gatewayEpoch,
        gatewayLeg: agent.gatewayLeg(),
        counters: agent.counters,
      }),
    },
  );
  return {
    agent,
    metricsPort: status.port,
    async stop() {
      await status.close();
      // a rolling update's successor on this node keeps the return path (the agent's stop)
      await agent.stop(handover ? () => handover.successorWaiting() : undefined);
    },
  };
}
