// strait export service / strait unexport service: create or delete a ServiceExport.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { MC_KINDS as K, readJoin } from '../control/clusterset/index.js';
import { openClusterStore } from './index.js';
import { formatJson, parseOutputFormat, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';

interface Flags { namespace: string; cluster: string; stateDir?: string; output: string }

const common = (c: Command) => takesGlobals(c, 'cluster', 'stateDir')
  .option('-n, --namespace <ns>', 'namespace of the service', 'default')
  .option('-o, --output <format>', 'output format: text or json', 'text');

export function registerExportCommands(program: Command): void {
  const ex = program.command('export').description('export a resource to the cluster set');
  common(ex.command('service').description('export a Service: create its ServiceExport').argument('<name>', 'service name'))
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Flags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const { store } = openClusterStore(resolveStateDir(opts.stateDir), opts.cluster);
      try {
        if (!(await readJoin(store))) throw E.mcNotJoined(opts.cluster);
        const svc = await store.get(K.Service, name, opts.namespace);
        if (!svc) throw E.notFound('Service', name, opts.namespace);
        const type = (svc.spec as { type?: string } | undefined)?.type ?? 'ClusterIP';
        if (type === 'ExternalName') throw E.mcExportUnsupported(opts.namespace, name, type);
        const se = await store.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: opts.namespace } });
        if (format === 'json') process.stdout.write(formatJson(se));
        else process.stdout.write(` ✓ Service ${opts.namespace}/${name} exported successfully from ${opts.cluster}\n`);
      } finally {
        await store.close();
      }
    });
  const un = program.command('unexport').description('stop exporting a resource to the cluster set');
  common(un.command('service').description('unexport a Service: delete its ServiceExport').argument('<name>', 'service name'))
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<Flags>();
      const format = parseOutputFormat(opts.output, ['text', 'json']);
      const { store } = openClusterStore(resolveStateDir(opts.stateDir), opts.cluster);
      try {
        const removed = await store.delete(K.ServiceExport, name, opts.namespace);
        if (!removed) throw E.notFound('ServiceExport', name, opts.namespace);
        if (format === 'json') process.stdout.write(formatJson({ unexported: { namespace: opts.namespace, name, cluster: opts.cluster } }));
        else process.stdout.write(` ✓ Service ${opts.namespace}/${name} unexported successfully from ${opts.cluster}\n`);
      } finally {
        await store.close();
      }
    });
}
