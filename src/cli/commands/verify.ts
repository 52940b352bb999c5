// strait verify: connectivity and service-discovery checks of a cluster (like subctl verify).
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { verifyCluster } from '../../control/multicluster/index.js';
import { openClusterStore, udpResolver } from '../multicluster/index.js';
import { formatJson, formatTable, parseOutputFormat } from '../output/index.js';
import { resolveStateDir } from '../state-dir.js';

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description('check connectivity (gateway connections) and service discovery (clusterset.local answers) of a cluster')
    .requiredOption('--dns <host:port>', 'the clusterset DNS server of the cluster to ask')
    .option('--cluster <name>', 'cluster to verify', 'cluster-a')
    .option('--state-dir <dir>', 'state directory of the local world')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action(async (opts: { dns: string; cluster: string; stateDir?: string; output: string }) => {
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const m = /^(.+):(\d+)$/.exec(opts.dns);
      if (!m) throw E.usage(`--dns ${JSON.stringify(opts.dns)} must be HOST:PORT, e.g. 127.0.0.1:5353`, { value: opts.dns });
      const { store } = openClusterStore(resolveStateDir(opts.stateDir), opts.cluster);
      try {
        const checks = await verifyCluster(store, opts.cluster, udpResolver(m[1]!, Number(m[2])));
        if (format === 'json') process.stdout.write(formatJson({ checks }));
        else process.stdout.write(formatTable(['CHECK', 'TARGET', 'RESULT', 'DETAIL'], checks.map((c) => [c.check, c.target, c.result, c.detail])));
        const failed = checks.filter((c) => c.result === 'fail').map((c) => `${c.check} ${c.target}: ${c.detail}`);
        if (failed.length > 0) throw E.mcDiagnoseFailed(failed);
      } finally {
        await store.close();
      }
    });
}
