// strait get KIND [NAME] [-n NS] [-A] [-l SELECTOR] [-o json|yaml|wide]
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { findKind } from '../../control/resources/index.js';
import { formatJson, formatTable, formatYaml, parseOutputFormat } from '../output/index.js';
import { tableFor } from './resource-columns.js';
import { addStoreOptions, withStore, type StoreCliOptions } from './store-options.js';

interface GetOptions extends StoreCliOptions {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  output?: string;
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
    .option('-o, --output <format>', 'text, wide, json or yaml', 'text'))
    .action(async (kindArg: string, name: string | undefined, opts: GetOptions) => {
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
