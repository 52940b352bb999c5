// strait join broker-info.subm --clusterid ID: join a cluster to the broker.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { CABLE_DRIVERS, joinCluster, parseBrokerInfo, setupKubernetesClusterSide, type CableDriver, type ClusterNetwork } from '../control/clusterset/index.js';
import { openKubernetesStore, type KubernetesResourceStore } from '../../platform/store/index.js';
import { openBrokerFromInfo, openClusterStore, readWorld } from './index.js';
import { formatJson, parseOutputFormat, readInput, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

export function readBrokerInfoFile(path: string) {
  return parseBrokerInfo(readInput(path), path);
}

export function parseBool(flag: string, value: string | boolean | undefined, dflt: boolean): boolean {
  if (value === undefined) return dflt;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw E.usage(`--${flag} takes true or false, not ${JSON.stringify(value)}`, { flag, value });
}

const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : []);

/** Network details: flags first, else the running world's description of the cluster. */
export function discoverNetwork(stateDir: string, clusterId: string, flags: { clustercidr?: string; servicecidr?: string; networkPlugin?: string }): ClusterNetwork {
  const wc = readWorld(stateDir)?.clusters?.find((c) => c.name === clusterId);
  return {
    clusterId,
    networkPlugin: flags.networkPlugin ?? 'strait',
    clusterCIDRs: flags.clustercidr ? list(flags.clustercidr) : wc?.clusterCIDR ? [wc.clusterCIDR] : [],
    serviceCIDRs: flags.servicecidr ? list(flags.servicecidr) : wc?.serviceCIDR ? [wc.serviceCIDR] : [],
  };
}

interface JoinFlags {
  clusterid?: string;
  cableDriver: string;
  natt?: string | boolean;
  clustercidr?: string;
  servicecidr?: string;
  networkPlugin?: string;
  stateDir?: string;
  kubeconfig?: string;
  context?: string;
  namespace: string;
  output: string;
}

export function registerJoinCommand(program: Command): void {
  takesGlobals(program
    .command('join'), 'stateDir')
    .description('join a cluster to the broker described by a broker-info file')
    .argument('<broker-info>', 'the broker-info.subm file written by deploy-broker')
    .option('--clusterid <id>', 'ID of the joining cluster (a DNS label)')
    .option('--cable-driver <driver>', `cable driver: ${CABLE_DRIVERS.join(' or ')}`, 'strait')
    .option('--natt [bool]', 'enable NAT traversal (--natt=false to disable)')
    .option('--clustercidr <cidrs>', 'cluster (pod) CIDRs, comma separated (default: discovered)')
    .option('--servicecidr <cidrs>', 'service CIDRs, comma separated (default: discovered)')
    .option('--network-plugin <name>', 'network plugin name (default: discovered)')
    .option('--kubeconfig <file>', "join this Kubernetes cluster (its API server); needs --clustercidr and --servicecidr")
    .option('--context <name>', 'kubeconfig context (with --kubeconfig)')
    .option('--namespace <ns>', "strait's namespace in the cluster (with --kubeconfig): gets Secret strait-psk", 'strait-system')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<JoinFlags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      if (!opts.clusterid) throw E.usage('join needs --clusterid ID, the ID of the joining cluster', {});
      if (!(CABLE_DRIVERS as string[]).includes(opts.cableDriver)) {
        throw E.usage(`--cable-driver ${JSON.stringify(opts.cableDriver)} is not one of ${CABLE_DRIVERS.join(', ')}`, { value: opts.cableDriver });
      }
      const natt = parseBool('natt', opts.natt, true);
      if (opts.context && !opts.kubeconfig) throw E.usage('--context needs --kubeconfig', { flag: 'context' });
      if (opts.kubeconfig && (!opts.clustercidr || !opts.servicecidr)) {
        throw E.usage('join --kubeconfig needs --clustercidr and --servicecidr (the cluster\'s pod and service CIDRs)', { flag: 'kubeconfig' });
      }
      const info = readBrokerInfoFile(file);
      let kube: KubernetesResourceStore | undefined;
      let network: ClusterNetwork;
      let local: { store: ReturnType<typeof openClusterStore>['store'] };
      if (opts.kubeconfig) {
        kube = openKubernetesStore({ kubeConfigPath: opts.kubeconfig, ...(opts.context ? { context: opts.context } : {}) });
        local = { store: kube };
        network = { clusterId: opts.clusterid, networkPlugin: opts.networkPlugin ?? 'strait', clusterCIDRs: list(opts.clustercidr), serviceCIDRs: list(opts.servicecidr) };
      } else {
        const stateDir = resolveStateDir(opts.stateDir);
        network = discoverNetwork(stateDir, opts.clusterid, opts);
        local = openClusterStore(stateDir, opts.clusterid);
      }
      const broker = openBrokerFromInfo(info);
      try {
        const r = await joinCluster({ broker, local: local.store, info, source: file, network, cableDriver: opts.cableDriver as CableDriver, natt });
        if (kube) await setupKubernetesClusterSide(kube, info, { namespace: opts.namespace });
        if (format === 'json') {
          process.stdout.write(formatJson({ ...r, brokerURL: info.brokerURL, cableDriver: opts.cableDriver, natEnabled: natt, network }));
        } else {
          process.stdout.write([
            `* ${file} says broker is at: ${info.brokerURL}`,
            `        Network plugin:  ${network.networkPlugin}`,
            `        Service CIDRs:   [${network.serviceCIDRs.join(' ')}]`,
            `        Cluster CIDRs:   [${network.clusterCIDRs.join(' ')}]`,
            ' ✓ Discovering network details',
            ` ✓ ${r.rejoined ? 'Rejoined' : 'Joined'} cluster ${r.clusterId} to the broker (cable driver ${opts.cableDriver}, NAT-T ${natt ? 'on' : 'off'})`,
            '',
          ].join('\n'));
        }
      } finally {
        await broker.close();
        await local.store.close();
      }
    });
}
