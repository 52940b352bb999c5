// strait delete KIND NAME [-n NS] | strait delete -f FILE|DIR|-
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { findKind } from '../../platform/resources/index.js';
import { loadForWrite } from './apply.js';
import { addStoreOptions, withStore, type StoreCliOptions } from '../../platform/cli-kit/index.js';

interface DeleteOptions extends StoreCliOptions {
  filename?: string[];
  namespace?: string;
  ignoreNotFound?: boolean;
}

export function registerDeleteCommand(program: Command): void {
  addStoreOptions(program
    .command('delete')
    .description('delete resources by kind and name, or those named in manifests (-f)')
    .argument('[kind]', 'kind, e.g. pods, serviceexport')
    .argument('[names...]', 'names of the objects')
    .option('-f, --filename <path...>', 'file, directory or - for standard input')
    .option('-n, --namespace <ns>', 'namespace (default "default")')
    .option('--ignore-not-found', 'exit 0 when an object does not exist'))
    .action(async (kindArg: string | undefined, names: string[], _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<DeleteOptions>();
      let targets: { apiVersion: string; kind: string; name: string; namespace?: string }[];
      if (opts.filename) {
        if (kindArg) throw E.usage('give either -f FILE or KIND NAME, not both');
        targets = loadForWrite(opts.filename, opts.namespace).map((m) => ({
          apiVersion: m.object.apiVersion, kind: m.object.kind, name: m.object.metadata.name, namespace: m.object.metadata.namespace,
        }));
      } else {
        if (!kindArg || names.length === 0) throw E.usage('strait delete needs KIND NAME... or -f FILE; see strait delete --help');
        const info = findKind(kindArg);
        targets = names.map((name) => ({ apiVersion: info.apiVersion, kind: info.kind, name, namespace: info.namespaced ? (opts.namespace ?? 'default') : undefined }));
      }
      await withStore(opts, async (store) => {
        for (const t of targets) {
          const gone = await store.delete(t, t.name, t.namespace);
          if (gone) process.stdout.write(`${t.kind.toLowerCase()} "${t.name}" deleted\n`);
          else if (!opts.ignoreNotFound) throw E.notFound(t.kind, t.name, t.namespace);
        }
      });
    });
}
