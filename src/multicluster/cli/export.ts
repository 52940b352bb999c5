// strait export service / strait unexport service: create or delete a ServiceExport
// (multicluster.x-k8s.io/v1alpha1), in the local world's cluster or, with
// --kubeconfig/--context, in a Kubernetes cluster, where the control module syncs it.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { MC_KINDS as K, readJoin } from '../control/clusterset/index.js';
import { openTarget, type ClusterTarget, type TargetOptions } from './index.js';
import { addKubeOptions, formatJson, parseOutputFormat, refuseWorldOptions, takesGlobals } from '../../platform/cli-kit/index.js';

interface Flags extends TargetOptions {
  namespace: string;
  output: string;
}

const common = (c: Command) =>
  addKubeOptions(takesGlobals(c, 'cluster', 'stateDir'))
    .option('-n, --namespace <ns>', 'namespace of the service', 'default')
    .option('-o, --output <format>', 'output format: text or json', 'text');

/** Open the command's cluster; in Kubernetes mode the ServiceExport CRD must be served. */
async function open(cmd: Command): Promise<{ opts: Flags; format: string; target: ClusterTarget }> {
  const opts = cmd.optsWithGlobals<Flags>();
  const format = parseOutputFormat(opts.output, ['text', 'json']);
  refuseWorldOptions(cmd, opts);
  const target = openTarget(opts);
  try {
    await target.kube?.requireKinds([K.ServiceExport]);
  } catch (err) {
    await target.close();
    throw err;
  }
  return { opts, format, target };
}

export function registerExportCommands(program: Command): void {
  const ex = program.command('export').description('export a resource to the cluster set');
  common(ex.command('service').description('export a Service: create its ServiceExport').argument('<name>', 'service name')).action(
    async (name: string, _opts: unknown, cmd: Command) => {
      const { opts, format, target } = await open(cmd);
      const { store } = target;
      try {
        const join = await readJoin(store);
        if (!join) throw E.mcNotJoined(target.name);
        const svc = await store.get(K.Service, name, opts.namespace);
        if (!svc) throw E.notFound('Service', name, opts.namespace);
        const type = (svc.spec as { type?: string } | undefined)?.type ?? 'ClusterIP';
        if (type === 'ExternalName') throw E.mcExportUnsupported(opts.namespace, name, type);
        const se = await store.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: opts.namespace } });
        if (format === 'json') process.stdout.write(formatJson(se));
        else process.stdout.write(` ✓ Service ${opts.namespace}/${name} exported successfully from ${join.clusterId}\n`);
      } finally {
        await target.close();
      }
    },
  );
  const un = program.command('unexport').description('stop exporting a resource to the cluster set');
  common(un.command('service').description('unexport a Service: delete its ServiceExport').argument('<name>', 'service name')).action(
    async (name: string, _opts: unknown, cmd: Command) => {
      const { opts, format, target } = await open(cmd);
      const { store } = target;
      try {
        const removed = await store.delete(K.ServiceExport, name, opts.namespace);
        if (!removed) throw E.notFound('ServiceExport', name, opts.namespace);
        const cluster = (await readJoin(store).catch(() => undefined))?.clusterId ?? target.name;
        if (format === 'json') process.stdout.write(formatJson({ unexported: { namespace: opts.namespace, name, cluster } }));
        else process.stdout.write(` ✓ Service ${opts.namespace}/${name} unexported successfully from ${cluster}\n`);
      } finally {
        await target.close();
      }
    },
  );
}
