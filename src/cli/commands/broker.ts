// strait deploy-broker: deploy the broker and write broker-info.subm (mode 0600).
import { writeFileSync, chmodSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { deployBroker, encodeBrokerInfo } from '../../control/multicluster/index.js';
import { openClusterStore } from '../multicluster/index.js';
import { formatJson, parseOutputFormat } from '../output/index.js';
import { resolveStateDir } from '../state-dir.js';

export function registerBrokerCommands(program: Command): void {
  program
    .command('deploy-broker')
    .description('deploy the multicluster broker and write broker-info.subm (with a newly generated IPsec PSK)')
    .option('--cluster <name>', 'cluster the broker is deployed on', 'cluster-a')
    .option('--state-dir <dir>', 'state directory of the local world')
    .option('--file <path>', 'where to write the broker info', 'broker-info.subm')
    .option('--components <list>', 'enabled components, comma separated', 'service-discovery,connectivity')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action(async (opts: { cluster: string; stateDir?: string; file: string; components: string; output: string }) => {
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const stateDir = resolveStateDir(opts.stateDir);
      const access = openClusterStore(stateDir, 'broker');
      try {
        const components = opts.components.split(',').map((c) => c.trim()).filter(Boolean);
        const info = await deployBroker(access.store, {
          brokerURL: access.url, cluster: opts.cluster, ...(access.token ? { token: access.token } : {}),
          components: components as never,
        });
        const text = encodeBrokerInfo(info);
        const file = resolve(opts.file);
        writeFileSync(file, text, { mode: 0o600 });
        chmodSync(file, 0o600);
        if (format === 'json') {
          process.stdout.write(formatJson({ file, brokerURL: info.brokerURL, components: info.components, cluster: opts.cluster, pskBytes: info.ipsecPSK.length }));
        } else {
          process.stdout.write(` ✓ Deploying the broker on ${opts.cluster}\n ✓ The broker has been deployed\n ✓ Creating ${opts.file} file\n ✓ A new IPsec PSK will be generated for ${opts.file}\n`);
        }
      } finally {
        await access.store.close();
      }
    });
}
