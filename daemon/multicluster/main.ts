// strait multicluster control entry: node dist/daemon/multicluster/main.js --config multicluster.yaml
import { printedInfo, runEntry, stopOnSignals } from '../entry.js';
import { configPathFromArgv, readConfigFile } from '../config-file.js';
import { runMulticlusterDaemon } from '../../src/multicluster/control/run/index.js';

const HELP = `usage: strait-multicluster --config FILE (YAML or JSON; docs/multicluster.md)

The multicluster control of one cluster: the export/import sync with the broker, the
clusterset.local DNS server, /metrics. SIGTERM stops.

  --config FILE   the daemon's configuration
  -h, --help      this help
  -V, --version   the version
`;

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-multicluster', HELP)) return;
  const path = configPathFromArgv(process.argv, 'strait-multicluster');
  const d = await runMulticlusterDaemon(readConfigFile(path));
  console.log(JSON.stringify({ msg: 'multicluster control started', cluster: d.agent.clusterId, dnsPort: d.dns?.port, metricsPort: d.metricsPort }));
  stopOnSignals(() => d.stop());
}

runEntry(main);
