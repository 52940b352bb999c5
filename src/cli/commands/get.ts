// strait get KIND[,KIND...]|all [NAME] [-n NS] [-A] [-l SELECTOR] [-o json|yaml|wide|name|jsonpath=TEMPLATE]
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { findKind, type KindInfo } from '../../platform/resources/index.js';
import type { KindRef, KubeObject, ObjectList, ResourceStore } from '../../platform/store/index.js';
import {
  addStoreOptions,
  formatJson,
  formatJsonLine,
  formatTable,
  formatYaml,
  parseJsonPathTemplate,
  parseOutputFormat,
  type JsonPathTemplate,
  type StoreCliOptions,
  withStore,
} from '../../platform/cli-kit/index.js';
import { tableFor } from './resource-columns.js';

interface GetOptions extends StoreCliOptions {
  namespace?: string;
  allNamespaces?: boolean;
  selector?: string;
  output?: string;
  watch?: boolean;
}

/** kubectl's "all" category, as far as strait serves it */
const ALL = ['pods', 'services', 'deployments'];

type Output = { format: 'text' | 'wide' | 'json' | 'yaml' | 'name' } | { format: 'jsonpath'; template: JsonPathTemplate };

export function parseGetOutput(value: string | undefined): Output {
  const v = (value ?? 'text').replace(/^=/, '');
  if (v === 'name') return { format: 'name' };
  const m = /^jsonpath=(.*)$/s.exec(v);
  if (m) return { format: 'jsonpath', template: parseJsonPathTemplate(m[1] as string) };
  if (v === 'jsonpath') throw E.usage("-o jsonpath needs a template: -o jsonpath='{.items[*].metadata.name}'");
  try {
    return { format: parseOutputFormat(v) };
  } catch {
    throw E.usage(`unknown output format ${JSON.stringify(value)}; use one of: text, wide, json, yaml, name, jsonpath=TEMPLATE`, { value });
  }
}

/** The kinds of "pods,svc" or "all", each once, in the order typed. */
export function parseKinds(arg: string): KindInfo[] {
  const out: KindInfo[] = [];
  for (const typed of arg
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .flatMap((s) => (s.toLowerCase() === 'all' ? ALL : [s]))) {
    const info = findKind(typed);
    if (!out.includes(info)) out.push(info);
  }
  if (out.length === 0) throw E.usage(`no resource kind in ${JSON.stringify(arg)}; see strait api-resources`);
  return out;
}

/** kubectl -o name: "pod/client", "deployment.apps/echo", "serviceexport.multicluster.x-k8s.io/echo" */
export function resourceName(o: KubeObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${o.kind.toLowerCase()}${group ? `.${group}` : ''}/${o.metadata.name}`;
}

export function registerGetCommand(program: Command): void {
  addStoreOptions(
    program
      .command('get')
      .description('list resources of one or more kinds ("pods,svc", "all"), or show one (kinds by plural, singular, short name or Kind; see api-resources)')
      .argument('<kind>', 'kind, e.g. pods, svc, peerauthentications, serviceexports; several with commas (pods,svc); all = pods, services, deployments')
      .argument('[name]', 'name of one object')
      .option('-n, --namespace <ns>', 'namespace (default "default")')
      .option('-A, --all-namespaces', 'list across all namespaces')
      .option('-l, --selector <selector>', 'label selector, e.g. app=echo,tier!=db')
      .option('-o, --output <format>', "text, wide, json, yaml, name, or jsonpath=TEMPLATE (e.g. -o jsonpath='{.items[*].metadata.name}')", 'text')
      .option('-w, --watch', 'after listing, print every change until interrupted (-o json: one event per line)'),
  ).action((kindArg: string, name: string | undefined, _opts: unknown, cmd: Command) => getAction(kindArg, name, cmd.optsWithGlobals<GetOptions>()));
}

type KindGroup = { info: KindInfo; items: KubeObject[]; resourceVersion?: string };
type NamespaceOf = (info: KindInfo) => string | undefined;

/** `strait get KIND[,KIND…] [NAME]`: one object or the lists, printed in the asked format, or watched with -w. */
async function getAction(kindArg: string, name: string | undefined, opts: GetOptions): Promise<void> {
  const out = parseGetOutput(opts.output);
  const kinds = parseKinds(kindArg);
  if (name !== undefined && opts.selector !== undefined) throw E.usage('give either NAME or -l SELECTOR, not both');
  const nsOf: NamespaceOf = (info) => (info.namespaced ? (opts.allNamespaces ? undefined : (opts.namespace ?? 'default')) : undefined);
  await withStore(opts, async (store) => {
    if (opts.watch) return getWatch(store, kinds, name, out, opts, nsOf);
    // one object of each kind, or the lists
    const groups: KindGroup[] = [];
    for (const info of kinds) {
      const ref = { apiVersion: info.apiVersion, kind: info.kind };
      if (name !== undefined) {
        const o = await store.get(ref, name, nsOf(info) ?? opts.namespace);
        if (!o) throw E.notFound(info.kind, name, info.namespaced ? (nsOf(info) ?? opts.namespace ?? 'default') : undefined);
        groups.push({ info, items: [o] });
      } else {
        const list = await store.list(ref, { namespace: nsOf(info), labelSelector: opts.selector });
        groups.push({ info, items: list.items, resourceVersion: list.resourceVersion });
      }
    }
    const items = groups.flatMap((g) => g.items);
    // one object asked for by name prints as itself; otherwise a List, as kubectl does
    const single = name !== undefined && kinds.length === 1 ? items[0] : undefined;
    const asData = (): unknown =>
      single ?? {
        apiVersion: 'v1',
        kind: 'List',
        metadata: { resourceVersion: groups.length === 1 ? (groups[0]?.resourceVersion ?? '') : '' },
        items,
      };
    switch (out.format) {
      case 'json':
        process.stdout.write(formatJson(asData()));
        return;
      case 'yaml':
        process.stdout.write(formatYaml(asData()));
        return;
      case 'jsonpath':
        process.stdout.write(out.template.render(asData()));
        return;
      case 'name':
        for (const o of items) process.stdout.write(`${resourceName(o)}\n`);
        return;
      default:
        break;
    }
    if (items.length === 0) {
      const ns = kinds.every((k) => k.namespaced) && !opts.allNamespaces ? (opts.namespace ?? 'default') : undefined;
      process.stderr.write(ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n');
      return;
    }
    process.stdout.write(groupTables(groups, kinds.length > 1, out.format === 'wide', name, nsOf));
  });
}

/** -w: one kind listed, then every change printed until interrupted. */
async function getWatch(store: ResourceStore, kinds: KindInfo[], name: string | undefined, out: Output, opts: GetOptions, nsOf: NamespaceOf): Promise<void> {
  if (kinds.length !== 1 || name !== undefined) throw E.usage('-w watches one kind: strait get KIND -w');
  const info = kinds[0] as KindInfo;
  if (out.format === 'name' || out.format === 'jsonpath') throw E.usage('-w prints text, wide or json');
  const ref = { apiVersion: info.apiVersion, kind: info.kind };
  const ns = nsOf(info);
  const list = await store.list(ref, { namespace: ns, labelSelector: opts.selector });
  await watchAndPrint(store, info.kind, ref, list, {
    namespace: ns,
    labelSelector: opts.selector,
    format: out.format,
    allNamespaces: info.namespaced && ns === undefined,
  });
}

/** A table per kind; with several kinds, names as KIND/NAME and a blank line between (kubectl's layout). */
function groupTables(groups: KindGroup[], several: boolean, wide: boolean, name: string | undefined, nsOf: NamespaceOf): string {
  const tables: string[] = [];
  for (const g of groups) {
    if (g.items.length === 0) continue;
    const t = tableFor(g.info.kind, g.items, {
      wide,
      allNamespaces: g.info.namespaced && nsOf(g.info) === undefined && name === undefined,
    });
    const nameCol = t.headers.indexOf('NAME');
    const rows = several ? t.rows.map((r, i) => r.map((c, j) => (j === nameCol ? resourceName(g.items[i] as KubeObject) : c))) : t.rows;
    tables.push(formatTable(t.headers, rows));
  }
  return tables.join('\n');
}

/** kubectl get -w: the list, then one line per change (rows without a header, or JSON events), until SIGINT/SIGTERM. */
async function watchAndPrint(
  store: ResourceStore,
  kind: string,
  ref: KindRef,
  list: ObjectList,
  opts: { namespace?: string; labelSelector?: string; format: string; allNamespaces: boolean },
): Promise<void> {
  const json = opts.format === 'json' || opts.format === 'yaml';
  const wide = opts.format === 'wide';
  if (json) for (const o of list.items) process.stdout.write(formatJsonLine({ type: 'ADDED', object: o }));
  else if (list.items.length) {
    const t = tableFor(kind, list.items, { wide, allNamespaces: opts.allNamespaces });
    process.stdout.write(formatTable(t.headers, t.rows));
  }
  const w = store.watch(ref, { namespace: opts.namespace, labelSelector: opts.labelSelector, resourceVersion: list.resourceVersion }, (ev) => {
    if (json) {
      process.stdout.write(formatJsonLine(ev));
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
