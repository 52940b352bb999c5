// strait multicluster control entry: node dist/daemon/multicluster/main.js --config multicluster.yaml
import { isStraitError } from '../../src/base/errors/index.js';
import { configPathFromArgv, readConfigFile } from '../config-file.js';
import { runMulticlusterDaemon } from './index.js';

async function main(): Promise<void> {
  const path = configPathFromArgv(process.argv, 'strait-multicluster');
  const d = await runMulticlusterDaemon(readConfigFile(path));
  console.log(JSON.stringify({ msg: 'multicluster control started', cluster: d.agent.clusterId, dnsPort: d.dns?.port, metricsPort: d.metricsPort }));
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
