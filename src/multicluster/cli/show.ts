// strait show connections|endpoints|gateways|networks|versions|brokers|clusters|exports|imports|all,
// from the local world's stores or, with --kubeconfig/--context, from the Kubernetes cluster
// where the gateways and the control module write the records (the same tables).
import type { Command } from 'commander';
import type { ResourceStore } from '../../platform/store/index.js';
import { CLUSTER_KINDS, collectShow, openTarget, renderShow, SHOW_ALL, SHOW_SECTIONS, showJson, type ShowWhat } from './index.js';
import { addKubeOptions, formatJson, parseOutputFormat, refuseWorldOptions, takesGlobals } from '../../platform/cli-kit/index.js';

export function registerShowCommands(program: Command): void {
  const show = program
    .command('show')
    .description('show the cluster-link records of a cluster (like subctl show); --kubeconfig/--context: of a Kubernetes cluster');
  const whats: (ShowWhat | 'all')[] = [...SHOW_SECTIONS, 'all'];
  for (const what of whats) {
    addKubeOptions(takesGlobals(show.command(what), 'cluster', 'stateDir'))
      .description(what === 'all' ? `show ${SHOW_ALL.join(', ')}` : `show ${what}`)
      .option('-o, --output <format>', 'output format: text or json', 'text')
      .action(async (_opts: unknown, cmd: Command) => {
        const opts = cmd.optsWithGlobals<{ cluster: string; stateDir?: string; output: string; kubeconfig?: string; context?: string }>();
        const format = parseOutputFormat(opts.output, ['text', 'json']);
        refuseWorldOptions(cmd, opts);
        const target = openTarget(opts, { existing: true });
        const sections = what === 'all' ? SHOW_ALL : [what];
        let broker: ResourceStore | undefined;
        try {
          await target.kube?.requireKinds(CLUSTER_KINDS);
          if (sections.includes('brokers') || sections.includes('clusters')) broker = await target.openBroker().catch(() => undefined);
          const data = await collectShow(target.store, broker, target.name, await target.running());
          process.stdout.write(format === 'json' ? formatJson(showJson(sections, data)) : renderShow(sections, data));
        } finally {
          await broker?.close();
          await target.close();
        }
      });
  }
}
