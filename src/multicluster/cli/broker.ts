// strait deploy-broker: deploy the broker and write broker-info.subm (mode 0600).
import { writeFileSync, chmodSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { deployBroker, deployKubernetesBroker, encodeBrokerInfo, MC_KINDS, type DeployedBroker } from '../control/clusterset/index.js';
import { E } from '../../base/errors/index.js';
import { BROKER_KINDS, openClusterStore } from './stores.js';
import { addKubeOptions, formatJson, isKubeMode, openKubeStore, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

export function registerBrokerCommands(program: Command): void {
  addKubeOptions(takesGlobals(program.command('deploy-broker'), 'cluster', 'stateDir'))
    .description(
      'deploy the multicluster broker and write broker-info.subm: with a new IPsec PSK on a broker no cluster has joined, ' +
        "with the cluster set's PSK on one that clusters have joined (one PSK per cluster set; --new-psk mints a new one, then every cluster joins again); " +
        'with --kubeconfig/--context, into the namespace submariner-k8s-broker of that API server',
    )
    .option('--file <path>', 'where to write the broker info', 'broker-info.subm')
    .option('--components <list>', 'enabled components, comma separated', 'service-discovery,connectivity')
    .option('--token-ttl <seconds>', 'lifetime of the broker token joined clusters use (Kubernetes mode)', String(365 * 24 * 3600))
    .option('--new-psk', 'mint a new IPsec PSK although clusters have joined with the current one: every joined cluster must then join again with the new file')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action((_opts: unknown, cmd: Command) => deployBrokerAction(cmd.optsWithGlobals<DeployBrokerOptions>()));
}

interface DeployBrokerOptions {
  cluster: string;
  stateDir?: string;
  file: string;
  components: string;
  output: string;
  kubeconfig?: string;
  context?: string;
  tokenTtl: string;
  newPsk?: boolean;
}

/** `strait deploy-broker`: deploy (world or Kubernetes), write the broker info file, say what happened. */
async function deployBrokerAction(opts: DeployBrokerOptions): Promise<void> {
  const format = parseOutputFormat(opts.output, ['text', 'json']);
  const components = opts.components
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const ttl = Number(opts.tokenTtl);
  if (!Number.isInteger(ttl) || ttl < 600)
    throw E.usage(`--token-ttl ${JSON.stringify(opts.tokenTtl)} must be a whole number of seconds, at least 600`, { value: opts.tokenTtl });
  const access = isKubeMode(opts) ? { kube: openKubeStore(opts) } : { world: openClusterStore(resolveStateDir(opts.stateDir), 'broker') };
  const store = access.kube ?? access.world!.store;
  try {
    let info: DeployedBroker;
    let tokenExpires: string | undefined;
    if (access.kube) {
      // the broker holds Clusters, Endpoints, Gateways and ServiceImports: without their CRDs every join would fail
      // ... and the Broker object describing it (subctl show brokers)
      await access.kube.requireKinds([...BROKER_KINDS, MC_KINDS.Broker]);
      const k = await deployKubernetesBroker(access.kube, {
        cluster: opts.cluster,
        components: components as never,
        tokenSeconds: ttl,
        newPsk: opts.newPsk === true,
      });
      info = k;
      tokenExpires = k.tokenExpires;
    } else {
      const w = access.world!;
      info = await deployBroker(w.store, {
        brokerURL: w.url,
        cluster: opts.cluster,
        ...(w.token ? { token: w.token } : {}),
        components: components as never,
        newPsk: opts.newPsk === true,
      });
    }
    const text = encodeBrokerInfo(info);
    const file = resolve(opts.file);
    writeFileSync(file, text, { mode: 0o600 });
    chmodSync(file, 0o600);
    printDeployed(format, opts, file, info, tokenExpires, access.kube !== undefined);
  } finally {
    await store.close();
  }
}

/** The deployed broker, as JSON or as subctl's check-marked lines (with what a new PSK asks of joined clusters). */
function printDeployed(format: string, opts: DeployBrokerOptions, file: string, info: DeployedBroker, tokenExpires: string | undefined, kube: boolean): void {
  if (format === 'json') {
    process.stdout.write(
      formatJson({
        file,
        brokerURL: info.brokerURL,
        components: info.components,
        cluster: opts.cluster,
        pskBytes: info.ipsecPSK.length,
        psk: info.pskKept ? 'kept' : 'new',
        joined: info.joined,
        ...(!info.pskKept && info.joined.length > 0 ? { mustJoinAgain: info.joined } : {}),
        ...(tokenExpires !== undefined ? { namespace: info.brokerNamespace, tokenExpires } : {}),
      }),
    );
  } else {
    process.stdout.write(
      ` ✓ Deploying the broker on ${opts.cluster}${kube ? ` (${info.brokerURL}, namespace ${info.brokerNamespace})` : ''}\n ✓ The broker has been deployed\n` +
        (tokenExpires !== undefined ? ` ✓ Token of ServiceAccount ${info.brokerNamespace}/strait-broker-client valid until ${tokenExpires}\n` : '') +
        ` ✓ Creating ${opts.file} file\n` +
        (info.pskKept
          ? ` ✓ Keeping the cluster set's IPsec PSK in ${opts.file} (joined with it: ${info.joined.join(', ')})\n`
          : ` ✓ A new IPsec PSK will be generated for ${opts.file}\n` +
            (info.joined.length > 0
              ? ` ! The joined clusters still use the previous PSK: join every one of them with ${opts.file} now, or their tunnels fail (psk-mismatch):\n` +
                info.joined.map((c) => `     strait join ${opts.file} --clusterid ${c}\n`).join('')
              : '')),
    );
  }
}
