// strait get KIND [NAME] [-n NS] [-A] [-l SELECTOR] [-o json|yaml|wide]
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { findKind } from '../../platform/resources/index.js';
import type { KindRef, ObjectList, ResourceStore } from '../../platform/store/index.js';
import { addStoreOptions, formatJson, formatTable, formatYaml, parseOutputFormat, type StoreCliOptions, withStore } from '../../platform/cli-kit/index.js';
import { tableFor } from './resource-columns.js';

interface GetOptions extends StoreCliOptions {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  output?: string;
  watch?: boolean;
}

export function registerGetCommand(program: Command): void {
  addStoreOptions(program
    .command('get')
    .description('list resources of a kind, or show one (kinds by plural, singular, short name or Kind; see api-resources)')
    .argument('<kind>', 'kind, e.g. pods, svc, peerauthentications, serviceexports')
    .argument('[name]', 'name of one object')
    .option('-n, --namespace <ns>', 'namespace (default "default")')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-l, --selector <selector>', 'label selector, e.g. app=echo,tier!=db')
    .option('-o, --output <format>', 'text, wide, json or yaml', 'text')
    .option('-w, --watch', 'after listing, print every change until interrupted (-o json: one event per line)'))
    .action(async (kindArg: string, name: string | undefined, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<GetOptions>();
      const format = parseOutputFormat(opts.output);
      const info = findKind(kindArg);
      const ref = { apiVersion: info.apiVersion, kind: info.kind };
      const ns = info.namespaced ? (opts.allNamespaces ? undefined : (opts.namespace ?? 'default')) : undefined;
      await withStore(opts, async (store) => {
        if (name !== undefined) {
          const o = await store.get(ref, name, ns ?? opts.namespace);
          if (!o) throw E.notFound(info.kind, name, info.namespaced ? (ns ?? 'default') : undefined);
          if (format === 'json') process.stdout.write(formatJson(o));
          else if (format === 'yaml') process.stdout.write(formatYaml(o));
          else {
            const t = tableFor(info.kind, [o], { wide: format === 'wide', allNamespaces: false });
            process.stdout.write(formatTable(t.headers, t.rows));
          }
          return;
        }
        const list = await store.list(ref, { namespace: ns, labelSelector: opts.selector });
        if (opts.watch) {
          await watchAndPrint(store, info.kind, ref, list, { namespace: ns, labelSelector: opts.selector, format, allNamespaces: info.namespaced && ns === undefined });
          return;
        }
        if (format === 'json' || format === 'yaml') {
          const out = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: list.resourceVersion }, items: list.items };
          process.stdout.write(format === 'json' ? formatJson(out) : formatYaml(out));
          return;
        }
        if (list.items.length === 0) {
          process.stderr.write(info.namespaced && ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n');
          return;
        }
        const t = tableFor(info.kind, list.items, { wide: format === 'wide', allNamespaces: info.namespaced && ns === undefined });
        process.stdout.write(formatTable(t.headers, t.rows));
      });
    });
}

/** kubectl get -w: the list, then one line per change (rows without a header, or JSON events), until SIGINT/SIGTERM. */
async function watchAndPrint(store: ResourceStore, kind: string, ref: KindRef, list: ObjectList,
  opts: { namespace?: string; labelSelector?: string; format: string; allNamespaces: boolean }): Promise<void> {
  const json = opts.format === 'json' || opts.format === 'yaml';
  const wide = opts.format === 'wide';
  if (json) for (const o of list.items) process.stdout.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
  else if (list.items.length) {
    const t = tableFor(kind, list.items, { wide, allNamespaces: opts.allNamespaces });
    process.stdout.write(formatTable(t.headers, t.rows));
  }
  const w = store.watch(ref, { namespace: opts.namespace, labelSelector: opts.labelSelector, resourceVersion: list.resourceVersion }, (ev) => {
    if (json) {
      process.stdout.write(`${JSON.stringify(ev)}\n`);
      return;
    }
    const t = tableFor(kind, [ev.object], { wide, allNamespaces: opts.allNamespaces });
    const row = formatTable(t.headers, t.rows).split('\n')[1] ?? '';
    process.stdout.write(`${row}${ev.type === 'DELETED' ? '   (deleted)' : ''}\n`);
  });
  const stop = () => w.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await w.done;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
