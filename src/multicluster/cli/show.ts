// strait show connections|endpoints|gateways|networks|versions|brokers|all
import type { Command } from 'commander';
import type { ResourceStore } from '../../platform/store/index.js';
import { collectShow, openBrokerOfCluster, openClusterStore, readRunningWorld, renderShow, SHOW_ALL, showJson, worldComponents, type ShowWhat } from './index.js';
import { formatJson, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

export function registerShowCommands(program: Command): void {
  const show = program.command('show').description('show the cluster-link records of a cluster (like subctl show)');
  const whats: (ShowWhat | 'all')[] = ['connections', 'endpoints', 'gateways', 'networks', 'versions', 'brokers', 'all'];
  for (const what of whats) {
    takesGlobals(show.command(what), 'cluster', 'stateDir')
      .description(what === 'all' ? 'show every section' : `show ${what}`)
      .option('-o, --output <format>', 'output format: text or json', 'text')
      .action(async (_opts: unknown, cmd: Command) => {
        const opts = cmd.optsWithGlobals<{ cluster: string; stateDir?: string; output: string }>();
        const format = parseOutputFormat(opts.output, ['text', 'json']);
        const stateDir = resolveStateDir(opts.stateDir);
        const { store } = openClusterStore(stateDir, opts.cluster, { existing: true });
        const sections = what === 'all' ? SHOW_ALL : [what];
        let broker: ResourceStore | undefined;
        try {
          if (sections.includes('brokers')) broker = await openBrokerOfCluster(store, stateDir).catch(() => undefined);
          const data = await collectShow(store, broker, opts.cluster, worldComponents(readRunningWorld(stateDir)?.components ?? [], opts.cluster));
          process.stdout.write(format === 'json' ? formatJson(showJson(sections, data)) : renderShow(sections, data));
        } finally {
          await broker?.close();
          await store.close();
        }
      });
  }
}
