// strait delete KIND[,KIND...] NAME... [-n NS] | strait delete KIND -l SELECTOR [-n NS|-A] | strait delete -f FILE|DIR|-
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { loadForWrite } from './apply.js';
import { parseKinds } from './get.js';
import { addStoreOptions, withStore, type StoreCliOptions } from '../../platform/cli-kit/index.js';

interface DeleteOptions extends StoreCliOptions {
  filename?: string[];
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  ignoreNotFound?: boolean;
}

export function registerDeleteCommand(program: Command): void {
  addStoreOptions(
    program
      .command('delete')
      .description('delete resources by kind and name, or those named in manifests (-f)')
      .argument('[kind]', 'kind, e.g. pods, serviceexport')
      .argument('[names...]', 'names of the objects')
      .option('-f, --filename <path...>', 'file, directory or - for standard input')
      .option('-n, --namespace <ns>', 'namespace (default "default")')
      .option('-l, --selector <selector>', 'delete the objects of KIND with these labels, e.g. app=echo')
      .option('-A, --all-namespaces', 'with -l: in every namespace')
      .option('--ignore-not-found', 'exit 0 when an object does not exist'),
  ).action(async (kindArg: string | undefined, names: string[], _opts: unknown, cmd: Command) => {
    const opts = cmd.optsWithGlobals<DeleteOptions>();
    type Target = { apiVersion: string; kind: string; name: string; namespace?: string };
    let targets: Target[] = [];
    if (opts.filename) {
      if (kindArg) throw E.usage('give either -f FILE or KIND NAME, not both');
      if (opts.selector !== undefined) throw E.usage('give either -f FILE or -l SELECTOR, not both');
      targets = loadForWrite(opts.filename, opts.namespace).map((m) => ({
        apiVersion: m.object.apiVersion,
        kind: m.object.kind,
        name: m.object.metadata.name,
        namespace: m.object.metadata.namespace,
      }));
    } else if (opts.selector !== undefined) {
      if (!kindArg || names.length > 0) throw E.usage('strait delete KIND -l SELECTOR takes no names');
    } else if (!kindArg || names.length === 0) {
      throw E.usage('strait delete needs KIND NAME..., KIND -l SELECTOR or -f FILE; see strait delete --help');
    } else {
      targets = parseKinds(kindArg).flatMap((info) =>
        names.map((name) => ({ apiVersion: info.apiVersion, kind: info.kind, name, namespace: info.namespaced ? (opts.namespace ?? 'default') : undefined })),
      );
    }
    await withStore(opts, async (store) => {
      if (opts.selector !== undefined && kindArg) {
        // the objects that match now; none is not an error (kubectl: "No resources found")
        for (const info of parseKinds(kindArg)) {
          const ns = info.namespaced && !opts.allNamespaces ? (opts.namespace ?? 'default') : undefined;
          const list = await store.list({ apiVersion: info.apiVersion, kind: info.kind }, { namespace: ns, labelSelector: opts.selector });
          targets.push(...list.items.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace })));
        }
        if (targets.length === 0) process.stderr.write('No resources found\n');
      }
      for (const t of targets) {
        const gone = await store.delete(t, t.name, t.namespace);
        if (gone) process.stdout.write(`${t.kind.toLowerCase()} "${t.name}" deleted\n`);
        else if (!opts.ignoreNotFound) throw E.notFound(t.kind, t.name, t.namespace);
      }
    });
  });
}
