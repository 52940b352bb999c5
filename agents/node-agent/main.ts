// strait node agent entry: node dist/agents/node-agent/main.js --config agent.yaml
import { isStraitError } from '../../src/base/errors/index.js';
import { configPathFromArgv, readConfigFile } from '../../daemon/config-file.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { runNodeAgentDaemon, withNodeName } from './index.js';

async function main(): Promise<void> {
  const path = configPathFromArgv(process.argv, 'strait-node-agent');
  const d = await runNodeAgentDaemon(withNodeName(readConfigFile(path), process.env['STRAIT_NODE_NAME']));
  console.log(JSON.stringify({ msg: 'node agent started', node: d.agent.config.nodeName, tun: d.agent.tunName, vxlanPort: d.agent.vxlanPort, metricsPort: d.metricsPort }));
  d.agent.onGatewayChange = (address, epoch) => {
    console.error(JSON.stringify({ time: new Date().toISOString(), component: 'node-agent', level: 'info', msg: `active gateway is now ${address} (lease epoch ${epoch})` }));
  };
  d.agent.onPumpError = (err) => {
    console.error(JSON.stringify({ time: new Date().toISOString(), component: 'node-agent', level: 'warn', msg: `native pump did not start, the JS path carries on (retried at the next hello-ack): ${String(err)}` }));
  };
  const stop = (): void => {
    d.stop().then(() => process.exit(0), () => process.exit(1));
  };
  // SIGHUP: re-read the file; a new active gateway (HA) takes effect at once
  process.on('SIGHUP', () => {
    try {
      const next = parseNodeAgentConfig(readConfigFile(path), path);
      d.agent.setGateway(next.gateway.address, next.gateway.port);
      console.error(JSON.stringify({ time: new Date().toISOString(), component: 'node-agent', level: 'info', msg: `reloaded ${path}: gateway ${next.gateway.address}:${next.gateway.port}` }));
    } catch (err) {
      console.error(JSON.stringify({ time: new Date().toISOString(), component: 'node-agent', level: 'error', msg: `reload of ${path} failed, keeping the running configuration: ${String(err)}` }));
    }
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(isStraitError(err) ? `error ${err.code}: ${err.message}` : err);
  process.exit(isStraitError(err) ? err.exitCode : 1);
});
