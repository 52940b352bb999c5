// strait join broker-info.subm --clusterid ID: join a cluster to the broker.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { CABLE_DRIVERS, joinCluster, parseBrokerInfo, setupKubernetesClusterSide, type CableDriver, type ClusterNetwork } from '../control/clusterset/index.js';
import type { KubernetesResourceStore, ResourceStore } from '../../platform/store/index.js';
import { BROKER_KINDS, CLUSTER_KINDS, openBrokerFromInfo, openClusterStore, readWorld } from './stores.js';
import {
  addKubeOptions,
  formatJson,
  isKubeMode,
  openKubeStore,
  parseOutputFormat,
  readInput,
  resolveStateDir,
  takesGlobals,
} from '../../platform/cli-kit/index.js';

export function readBrokerInfoFile(path: string) {
  return parseBrokerInfo(readInput(path), path);
}

export function parseBool(flag: string, value: string | boolean | undefined, dflt: boolean): boolean {
  if (value === undefined) return dflt;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw E.usage(`--${flag} takes true or false, not ${JSON.stringify(value)}`, { flag, value });
}

const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];

/** Network details: flags first, else the running world's description of the cluster (none in Kubernetes mode: stateDir undefined). */
export function discoverNetwork(
  stateDir: string | undefined,
  clusterId: string,
  flags: { clustercidr?: string; servicecidr?: string; networkPlugin?: string },
): ClusterNetwork {
  const wc = stateDir === undefined ? undefined : readWorld(stateDir)?.clusters?.find((c) => c.name === clusterId);
  return {
    clusterId,
    networkPlugin: flags.networkPlugin ?? 'strait',
    clusterCIDRs: flags.clustercidr ? list(flags.clustercidr) : wc?.clusterCIDR ? [wc.clusterCIDR] : [],
    serviceCIDRs: flags.servicecidr ? list(flags.servicecidr) : wc?.serviceCIDR ? [wc.serviceCIDR] : [],
  };
}

const isKube = (s: ResourceStore): s is KubernetesResourceStore => typeof (s as Partial<KubernetesResourceStore>).requireKinds === 'function';

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
  addKubeOptions(takesGlobals(program.command('join'), 'stateDir'))
    .description(
      'join a cluster to the broker described by a broker-info file; with --kubeconfig/--context, a Kubernetes cluster ' +
        '(needs --clustercidr and --servicecidr, and deploy/crds.yaml applied)',
    )
    .argument('<broker-info>', 'the broker-info.subm file written by deploy-broker')
    .option('--clusterid <id>', 'ID of the joining cluster (a DNS label)')
    .option('--cable-driver <driver>', `cable driver: ${CABLE_DRIVERS.join(' or ')}`, 'strait')
    .option('--natt [bool]', 'enable NAT traversal (--natt=false to disable)')
    .option('--clustercidr <cidrs>', 'cluster (pod) CIDRs, comma separated (default: discovered)')
    .option('--servicecidr <cidrs>', 'service CIDRs, comma separated (default: discovered)')
    .option('--network-plugin <name>', 'network plugin name (default: discovered)')
    .option('--namespace <ns>', "strait's namespace in the cluster (Kubernetes mode): gets Secret strait-psk", 'strait-system')
    .option('-o, --output <format>', 'output format: text or json', 'text')
    .action((file: string, _opts: unknown, cmd: Command) => joinAction(file, cmd.optsWithGlobals<JoinFlags>()));
}

/** `strait join FILE`: the flags checked, the cluster's store and network, the join, what it did. */
async function joinAction(file: string, opts: JoinFlags): Promise<void> {
  const format = parseOutputFormat(opts.output, ['text', 'json']);
  if (!opts.clusterid) throw E.usage('join needs --clusterid ID, the ID of the joining cluster', {});
  if (!(CABLE_DRIVERS as string[]).includes(opts.cableDriver)) {
    throw E.usage(`--cable-driver ${JSON.stringify(opts.cableDriver)} is not one of ${CABLE_DRIVERS.join(', ')}`, { value: opts.cableDriver });
  }
  const natt = parseBool('natt', opts.natt, true);
  const kubeMode = isKubeMode(opts);
  if (kubeMode && (!opts.clustercidr || !opts.servicecidr)) {
    throw E.usage("join --kubeconfig needs --clustercidr and --servicecidr (the cluster's pod and service CIDRs)", { flag: 'kubeconfig' });
  }
  const kube = kubeMode ? await openJoiningKube(opts) : undefined;
  let info: ReturnType<typeof readBrokerInfoFile>;
  try {
    info = readBrokerInfoFile(file);
  } catch (err) {
    await kube?.close();
    throw err;
  }
  let network: ClusterNetwork;
  let local: { store: ResourceStore };
  if (kube) {
    local = { store: kube };
    network = {
      clusterId: opts.clusterid,
      networkPlugin: opts.networkPlugin ?? 'strait',
      clusterCIDRs: list(opts.clustercidr),
      serviceCIDRs: list(opts.servicecidr),
    };
  } else {
    const stateDir = resolveStateDir(opts.stateDir);
    network = discoverNetwork(stateDir, opts.clusterid, opts);
    local = openClusterStore(stateDir, opts.clusterid);
  }
  let broker: ResourceStore | undefined;
  try {
    broker = openBrokerFromInfo(info);
    if (isKube(broker)) await broker.requireKinds(BROKER_KINDS);
    const r = await joinCluster({ broker, local: local.store, info, source: file, network, cableDriver: opts.cableDriver as CableDriver, natt });
    if (kube) await setupKubernetesClusterSide(kube, info, { namespace: opts.namespace });
    printJoined(format, file, opts.cableDriver, natt, info, network, r);
  } finally {
    await broker?.close();
    await local.store.close();
  }
}

/**
 * Kubernetes mode: the cluster first: its kubeconfig and context usable, the kinds the join writes served
 * (else STRAIT_ERR_KUBE_CONFIG / STRAIT_ERR_KUBE_CRD_MISSING, and nothing is written anywhere).
 */
async function openJoiningKube(opts: JoinFlags): Promise<KubernetesResourceStore> {
  const kube = openKubeStore(opts);
  try {
    await kube.requireKinds(CLUSTER_KINDS);
  } catch (err) {
    await kube.close();
    throw err;
  }
  return kube;
}

/** The join's result, as JSON or as subctl's lines. */
function printJoined(
  format: string,
  file: string,
  cableDriver: string,
  natt: boolean,
  info: ReturnType<typeof readBrokerInfoFile>,
  network: ClusterNetwork,
  r: Awaited<ReturnType<typeof joinCluster>>,
): void {
  if (format === 'json') {
    process.stdout.write(formatJson({ ...r, brokerURL: info.brokerURL, cableDriver, natEnabled: natt, network }));
  } else {
    process.stdout.write(
      [
        `* ${file} says broker is at: ${info.brokerURL}`,
        `        Network plugin:  ${network.networkPlugin}`,
        `        Service CIDRs:   [${network.serviceCIDRs.join(' ')}]`,
        `        Cluster CIDRs:   [${network.clusterCIDRs.join(' ')}]`,
        ' ✓ Discovering network details',
        ` ✓ ${r.rejoined ? 'Rejoined' : 'Joined'} cluster ${r.clusterId} to the broker (cable driver ${cableDriver}, NAT-T ${natt ? 'on' : 'off'})`,
        '',
      ].join('\n'),
    );
  }
}
