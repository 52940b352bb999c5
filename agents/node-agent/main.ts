// strait node agent entry: node dist/agents/node-agent/main.js --config agent.yaml
import { isStraitError } from '../../src/base/errors/index.js';
import { configPathFromArgv, readConfigFile } from '../../daemon/config-file.js';
import { runNodeAgentDaemon } from './index.js';

async function main(): Promise<void> {
  const d = await runNodeAgentDaemon(readConfigFile(configPathFromArgv(process.argv, 'strait-node-agent')));
  console.log(JSON.stringify({ msg: 'node agent started', node: d.agent.config.nodeName, tun: d.agent.tunName, vxlanPort: d.agent.vxlanPort, metricsPort: d.metricsPort }));
  const stop = (): void => {
    d.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(isStraitError(err) ? `error ${err.code}: ${err.message}` : err);
  process.exit(isStraitError(err) ? err.exitCode : 1);
});
