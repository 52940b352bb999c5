// strait deploy-broker: deploy the broker and write broker-info.subm (mode 0600).
import { writeFileSync, chmodSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { deployBroker, deployKubernetesBroker, encodeBrokerInfo, type BrokerInfo } from '../control/clusterset/index.js';
import { E } from '../../base/errors/index.js';
import { BROKER_KINDS, openClusterStore } from './index.js';
import { addKubeOptions, formatJson, isKubeMode, openKubeStore, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

export function registerBrokerCommands(program: Command): void {
  addKubeOptions(takesGlobals(program
    .command('deploy-broker'), 'cluster', 'stateDir'))
    .description('deploy the multicluster broker and write broker-info.subm (with a newly generated IPsec PSK); '
      + 'with --kubeconfig/--context, into the namespace submariner-k8s-broker of that API server')
    .option('--file <path>', 'where to write the broker info', 'broker-info.subm')
    .option('--components <list>', 'enabled components, comma separated', 'service-discovery,connectivity')
    .option('--token-ttl <seconds>', 'lifetime of the broker token joined clusters use (Kubernetes mode)', String(365 * 24 * 3600))
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ cluster: string; stateDir?: string; file: string; components: string; output: string; kubeconfig?: string; context?: string; tokenTtl: string }>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const components = opts.components.split(',').map((c) => c.trim()).filter(Boolean);
      const ttl = Number(opts.tokenTtl);
      if (!Number.isInteger(ttl) || ttl < 600) throw E.usage(`--token-ttl ${JSON.stringify(opts.tokenTtl)} must be a whole number of seconds, at least 600`, { value: opts.tokenTtl });
      const access = isKubeMode(opts)
        ? { kube: openKubeStore(opts) }
        : { world: openClusterStore(resolveStateDir(opts.stateDir), 'broker') };
      const store = access.kube ?? access.world!.store;
      try {
        let info: BrokerInfo;
        let tokenExpires: string | undefined;
        if (access.kube) {
          // the broker holds Clusters, Endpoints, Gateways and ServiceImports: without their CRDs every join would fail
          await access.kube.requireKinds(BROKER_KINDS);
          const k = await deployKubernetesBroker(access.kube, { cluster: opts.cluster, components: components as never, tokenSeconds: ttl });
          info = k;
          tokenExpires = k.tokenExpires;
        } else {
          const w = access.world!;
          info = await deployBroker(w.store, {
            brokerURL: w.url, cluster: opts.cluster, ...(w.token ? { token: w.token } : {}),
            components: components as never,
          });
        }
        const text = encodeBrokerInfo(info);
        const file = resolve(opts.file);
        writeFileSync(file, text, { mode: 0o600 });
        chmodSync(file, 0o600);
        if (format === 'json') {
          process.stdout.write(formatJson({
            file, brokerURL: info.brokerURL, components: info.components, cluster: opts.cluster, pskBytes: info.ipsecPSK.length,
            ...(tokenExpires !== undefined ? { namespace: info.brokerNamespace, tokenExpires } : {}),
          }));
        } else {
          process.stdout.write(` ✓ Deploying the broker on ${opts.cluster}${access.kube ? ` (${info.brokerURL}, namespace ${info.brokerNamespace})` : ''}\n ✓ The broker has been deployed\n`
            + (tokenExpires !== undefined ? ` ✓ Token of ServiceAccount ${info.brokerNamespace}/strait-broker-client valid until ${tokenExpires}\n` : '')
            + ` ✓ Creating ${opts.file} file\n ✓ A new IPsec PSK will be generated for ${opts.file}\n`);
        }
      } finally {
        await store.close();
      }
    });
}
