// strait gateway daemon entry: node dist/daemon/gateway/main.js --config gateway.yaml
import { isStraitError } from '../../src/base/errors/index.js';
import { configPathFromArgv, readConfigFile } from '../config-file.js';
import { runGatewayDaemon } from './index.js';

async function main(): Promise<void> {
  const cfg = readConfigFile(configPathFromArgv(process.argv, 'strait-gateway'));
  const d = await runGatewayDaemon(cfg, {
    onEvent: (ev) => console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', ...ev })),
  });
  console.log(JSON.stringify({ msg: 'gateway started', cluster: d.gateway.config.clusterId, tunnelPort: d.gateway.tunnelPort, vxlanPort: d.gateway.vxlanPort, metricsPort: d.metricsPort }));
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
