// strait node agent entry: node dist/agents/node-agent/main.js --config agent.yaml
import { printedInfo, runEntry } from '../../daemon/entry.js';
import { configPathFromArgv, readConfigFile } from '../../daemon/config-file.js';
import { parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { runNodeAgentDaemon, withNodeName } from '../../src/multicluster/control/node-agent/index.js';

const HELP = `usage: strait-node-agent --config FILE (YAML or JSON; docs/gateway-and-agent.md)

The node agent: wraps this node's cross-cluster packets VXLAN-style (UDP 4800) to the
cluster's active gateway, /metrics. SIGHUP re-reads the file (a new active gateway takes
effect at once), SIGTERM stops.

  --config FILE   the agent's configuration
  -h, --help      this help
  -V, --version   the version
`;

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-node-agent', HELP)) return;
  const path = configPathFromArgv(process.argv, 'strait-node-agent');
  const d = await runNodeAgentDaemon(withNodeName(readConfigFile(path), process.env['STRAIT_NODE_NAME']));
  console.log(
    JSON.stringify({
      msg: 'node agent started',
      node: d.agent.config.nodeName,
      tun: d.agent.tunName,
      vxlanPort: d.agent.vxlanPort,
      metricsPort: d.metricsPort,
    }),
  );
  d.agent.onGatewayChange = (address, epoch) => {
    console.error(
      JSON.stringify({
        time: new Date().toISOString(),
        component: 'node-agent',
        level: 'info',
        msg: `active gateway is now ${address} (lease epoch ${epoch})`,
      }),
    );
  };
  d.agent.onPumpError = (err) => {
    console.error(
      JSON.stringify({
        time: new Date().toISOString(),
        component: 'node-agent',
        level: 'warn',
        msg: `native pump did not start, the JS path carries on (retried at the next hello-ack): ${String(err)}`,
      }),
    );
  };
  const stop = (): void => {
    d.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // SIGHUP: re-read the file; a new active gateway (HA) takes effect at once
  process.on('SIGHUP', () => {
    try {
      const next = parseNodeAgentConfig(readConfigFile(path), path);
      d.agent.setGateway(next.gateway.address, next.gateway.port);
      console.error(
        JSON.stringify({
          time: new Date().toISOString(),
          component: 'node-agent',
          level: 'info',
          msg: `reloaded ${path}: gateway ${next.gateway.address}:${next.gateway.port}`,
        }),
      );
    } catch (err) {
      console.error(
        JSON.stringify({
          time: new Date().toISOString(),
          component: 'node-agent',
          level: 'error',
          msg: `reload of ${path} failed, keeping the running configuration: ${String(err)}`,
        }),
      );
    }
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

runEntry(main);
