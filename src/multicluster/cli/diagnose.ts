// strait diagnose: CIDR overlaps and what else blocks a join or the cluster set.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { diagnose, type BrokerInfo } from '../control/clusterset/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { openBrokerFromInfo, openBrokerOfCluster, openClusterStore } from './index.js';
import { formatJson, formatTable, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';
import { discoverNetwork, readBrokerInfoFile } from './join.js';

interface Flags {
  cluster: string;
  brokerInfo?: string;
  clusterid?: string;
  clustercidr?: string;
  servicecidr?: string;
  stateDir?: string;
  output: string;
}

export function registerDiagnoseCommand(program: Command): void {
  takesGlobals(program
    .command('diagnose'), 'cluster', 'stateDir')
    .description('check the cluster set: CIDR overlaps, broker info, endpoints, connections, exports; with --clusterid, what blocks that join')
    .option('--broker-info <file>', 'broker-info.subm to check (default: the broker the cluster joined)')
    .option('--clusterid <id>', 'check a join of this cluster ID')
    .option('--clustercidr <cidrs>', 'cluster CIDRs of the candidate')
    .option('--servicecidr <cidrs>', 'service CIDRs of the candidate')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Flags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const stateDir = resolveStateDir(opts.stateDir);
      const { store: local } = openClusterStore(stateDir, opts.cluster, { existing: true });
      let broker: ResourceStore | undefined;
      let info: BrokerInfo | undefined;
      try {
        if (opts.brokerInfo) {
          info = readBrokerInfoFile(opts.brokerInfo);
          broker = openBrokerFromInfo(info);
        } else {
          broker = await openBrokerOfCluster(local, stateDir);
        }
        if (!broker) throw E.mcBrokerNotDeployed(stateDir);
        const checks = await diagnose({
          broker, local, localClusterId: opts.cluster,
          ...(opts.clusterid ? { candidate: { ...(info ? { info, source: opts.brokerInfo } : {}), network: discoverNetwork(stateDir, opts.clusterid, opts) } } : {}),
        });
        if (format === 'json') process.stdout.write(formatJson({ checks }));
        else process.stdout.write(formatTable(['CHECK', 'STATUS', 'MESSAGE'], checks.map((c) => [c.check, c.status, c.message])));
        const failed = checks.filter((c) => c.status === 'fail').map((c) => c.message);
        if (failed.length > 0) throw E.mcDiagnoseFailed(failed);
      } finally {
        await broker?.close();
        await local.close();
      }
    });
}
