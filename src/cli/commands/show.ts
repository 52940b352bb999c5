// strait show connections|endpoints|gateways|networks|versions|brokers|all
import type { Command } from 'commander';
import {
  describeBroker, MC_KINDS as K, readEndpoint, readGateway, readJoin, type BrokerDescription,
} from '../../control/multicluster/index.js';
import type { ResourceStore } from '../../control/store/index.js';
import { openBrokerOfCluster, openClusterStore, renderShow, SHOW_ALL, showJson, type ShowData, type ShowWhat, type VersionRow } from '../multicluster/index.js';
import { formatJson, parseOutputFormat } from '../output/index.js';
import { resolveStateDir } from '../state-dir.js';
import { VERSION } from '../version.js';

export const COMPONENTS = ['strait-gateway', 'strait-node-agent', 'strait-control'] as const;
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

export async function collectShow(local: ResourceStore, broker: ResourceStore | undefined, cluster: string): Promise<ShowData> {
  const join = await readJoin(local);
  const clusterId = join?.clusterId ?? cluster;
  const endpoints = (await local.list(K.Endpoint, {})).items.map((e) => readEndpoint(e, clusterId))
    .sort((a, b) => (a.type === b.type ? a.cluster.localeCompare(b.cluster) : a.type === 'local' ? -1 : 1));
  const gws = (await local.list(K.Gateway, {})).items.map(readGateway);
  const running = new Map<string, string>();
  for (const g of (await local.list(K.Gateway, {})).items) {
    const v = (g.status as { version?: string } | undefined)?.version;
    if (v) running.set('strait-gateway', v);
  }
  const versions: VersionRow[] = COMPONENTS.map((component) => ({
    component, repository: process.env['STRAIT_IMAGE_REPOSITORY'] ?? 'localhost/strait',
    configured: VERSION, running: running.get(component) ?? VERSION, arch: GOARCH[process.arch] ?? process.arch,
  }));
  let brokers: BrokerDescription[] = [];
  if (broker) {
    try {
      brokers = [await describeBroker(broker)];
    } catch {
      brokers = [];
    }
  }
  return {
    cluster: clusterId,
    connections: gws.flatMap((g) => g.connections).sort((a, b) => a.cluster.localeCompare(b.cluster)),
    endpoints,
    gateways: gws.map((g) => g.gateway).sort((a, b) => a.node.localeCompare(b.node)),
    ...(join ? { network: join.network } : {}),
    versions,
    brokers,
  };
}

export function registerShowCommands(program: Command): void {
  const show = program.command('show').description('show the cluster-link records of a cluster (like subctl show)');
  const whats: (ShowWhat | 'all')[] = ['connections', 'endpoints', 'gateways', 'networks', 'versions', 'brokers', 'all'];
  for (const what of whats) {
    show.command(what)
      .description(what === 'all' ? 'show every section' : `show ${what}`)
      .option('--cluster <name>', 'cluster to show', 'cluster-a')
      .option('--state-dir <dir>', 'state directory of the local world')
      .option('-o, --output <format>', 'output format: text or json', 'text')
      .action(async (opts: { cluster: string; stateDir?: string; output: string }) => {
        const format = parseOutputFormat(opts.output, ['text', 'json']);
        const stateDir = resolveStateDir(opts.stateDir);
        const { store } = openClusterStore(stateDir, opts.cluster);
        const sections = what === 'all' ? SHOW_ALL : [what];
        let broker: ResourceStore | undefined;
        try {
          if (sections.includes('brokers')) broker = await openBrokerOfCluster(store, stateDir).catch(() => undefined);
          const data = await collectShow(store, broker, opts.cluster);
          process.stdout.write(format === 'json' ? formatJson(showJson(sections, data)) : renderShow(sections, data));
        } finally {
          await broker?.close();
          await store.close();
        }
      });
  }
}
