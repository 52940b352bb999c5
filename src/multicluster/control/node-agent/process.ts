// The node agent process (`strait-node-agent --config FILE`): the node's name completed from
// the environment (deploy/node-agent.yaml), the daemon with /metrics (run.ts), its gateway
// changes and pump failures logged as JSON lines on stderr, and `reload` for SIGHUP (a new
// active gateway takes effect at once). As the gateway's process.ts does.
import { Handover } from '../../dataplane/handover/index.js';
import { parseNodeAgentConfig } from '../../dataplane/node-agent/index.js';
import { runNodeAgentDaemon, withNodeName, type NodeAgentDaemon } from './run.js';

const line = (level: string, msg: string): void => console.error(JSON.stringify({ time: new Date().toISOString(), component: 'node-agent', level, msg }));

export interface NodeAgentProcess {
  daemon: NodeAgentDaemon;
  /** SIGHUP: the configuration file read again; a new active gateway (HA) takes effect at once */
  reload(read: () => unknown, path: string): void;
  stop(): Promise<void>;
}

export async function startNodeAgentProcess(cfg: unknown, env: NodeJS.ProcessEnv = process.env): Promise<NodeAgentProcess> {
  // a rolling update starts this agent beside the one it replaces: $STRAIT_HANDOVER_WAIT_S
  // (announced on the node while it waits: the agent it replaces leaves it the return path)
  const handover = Handover.fromEnv('node agent', env, (msg) => line('info', msg), { announceSuccessor: true });
  const d = await runNodeAgentDaemon(withNodeName(cfg, env['STRAIT_NODE_NAME']), handover);
  handover.done();
  if (handover.tookOverMessage) line('info', handover.tookOverMessage);
  d.agent.onGatewayChange = (address, epoch) => {
    line('info', `active gateway is now ${address} (lease epoch ${epoch})`);
  };
  d.agent.onPumpError = (err) => {
    line('warn', `native pump did not start, the JS path carries on (retried at the next hello-ack): ${String(err)}`);
  };
  return {
    daemon: d,
    reload(read, path) {
      try {
        const next = parseNodeAgentConfig(read(), path);
        d.agent.setGateway(next.gateway.address, next.gateway.port);
        line('info', `reloaded ${path}: gateway ${next.gateway.address}:${next.gateway.port}`);
      } catch (err) {
        line('error', `reload of ${path} failed, keeping the running configuration: ${String(err)}`);
      }
    },
    stop: () => d.stop(),
  };
}
