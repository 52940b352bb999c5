// strait node agent entry: node dist/agents/node-agent/main.js --config agent.yaml
import { printedInfo, runEntry, stopOnSignals } from '../../daemon/entry.js';
import { configPathFromArgv, readConfigFile } from '../../daemon/config-file.js';
import { startNodeAgentProcess } from '../../src/multicluster/control/node-agent/index.js';

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
  const p = await startNodeAgentProcess(readConfigFile(path));
  const d = p.daemon;
  console.log(
    JSON.stringify({
      msg: 'node agent started',
      node: d.agent.config.nodeName,
      tun: d.agent.tunName,
      vxlanPort: d.agent.vxlanPort,
      metricsPort: d.metricsPort,
    }),
  );
  // SIGHUP: re-read the file; a new active gateway (HA) takes effect at once
  stopOnSignals(
    () => p.stop(),
    () => p.reload(() => readConfigFile(path), path),
  );
}

runEntry(main);
