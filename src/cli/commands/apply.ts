// strait apply -f FILE|DIR|- : validate every document, dry-run every object against the
// store, then write them; a failure before the writes stores nothing.
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { kindOf, type LoadedManifest } from '../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';
import { addStoreOptions, formatJson, formatYaml, loadManifests, parseOutputFormat, type StoreCliOptions, withStore } from '../../platform/cli-kit/index.js';

interface ApplyOptions extends StoreCliOptions {
  filename: string[];
  namespace?: string;
  output?: string;
  dryRun?: string | boolean;
}

type DryRun = 'none' | 'client' | 'server';

/** kubectl's --dry-run: none, client (validate the files, no store needed) or server (also the store's checks, nothing written). */
export function parseDryRun(v: string | boolean | undefined): DryRun {
  if (v === undefined || v === false) return 'none';
  if (v === true) return 'client'; // a bare --dry-run, as kubectl took it before it wanted a value
  if (v === 'none' || v === 'client' || v === 'server') return v;
  throw E.usage(`--dry-run must be none, client or server, not ${JSON.stringify(v)}`, { value: v });
}

/** Load every source and put each namespaced object in its namespace (-n, else its own, else "default"). */
export function loadForWrite(files: string[], namespace: string | undefined): LoadedManifest[] {
  const all = files.flatMap((f) => loadManifests(f));
  for (const m of all) {
    const info = kindOf(m.object.apiVersion, m.object.kind);
    if (!info?.namespaced) continue;
    const own = m.object.metadata.namespace;
    if (namespace && own && own !== namespace) {
      throw E.usage(
        `${m.source} document ${m.docIndex}: the namespace of ${m.object.kind} "${m.object.metadata.name}" is "${own}", not "${namespace}" given with -n; remove one of them`,
        { source: m.source, docIndex: m.docIndex },
      );
    }
    m.object.metadata.namespace = own ?? namespace ?? 'default';
  }
  return all;
}

const ref = (o: KubeObject): string => `${o.kind.toLowerCase()}/${o.metadata.name}`;

/** Every object checked by the store (names, conflicts) before anything is written; with dryRun, nothing is. */
async function applyAll(store: ResourceStore, manifests: LoadedManifest[], dryRun: boolean): Promise<{ object: KubeObject; verb: string }[]> {
  const before: (KubeObject | undefined)[] = [];
  for (const m of manifests) {
    before.push(await store.get(m.object, m.object.metadata.name, m.object.metadata.namespace));
    await store.apply(m.object, { dryRun: true, fieldManager: 'strait-cli' });
  }
  if (dryRun) return manifests.map((m, i) => ({ object: m.object, verb: before[i] ? 'configured (server dry run)' : 'created (server dry run)' }));
  const out: { object: KubeObject; verb: string }[] = [];
  for (const [i, m] of manifests.entries()) {
    const o = await store.apply(m.object, { fieldManager: 'strait-cli' });
    const old = before[i];
    out.push({ object: o, verb: !old ? 'created' : old.metadata.resourceVersion === o.metadata.resourceVersion ? 'unchanged' : 'configured' });
  }
  return out;
}

export function registerApplyCommand(program: Command): void {
  addStoreOptions(
    program
      .command('apply')
      .description('create or update resources from a file, a directory of .yaml/.yml/.json files, or - (standard input)')
      .requiredOption('-f, --filename <path...>', 'file, directory or - for standard input (repeatable)')
      .option('-n, --namespace <ns>', 'namespace for objects that name none')
      .option('--dry-run [strategy]', "client: validate the files only (no world needed); server: also the store's checks; nothing is written")
      .option('-o, --output <format>', 'text, json or yaml', 'text'),
  ).action(async (_opts: unknown, cmd: Command) => {
    const opts = cmd.optsWithGlobals<ApplyOptions>();
    const format = parseOutputFormat(opts.output, ['text', 'json', 'yaml']);
    const dryRun = parseDryRun(opts.dryRun);
    const manifests = loadForWrite(opts.filename, opts.namespace);
    const results =
      dryRun === 'client'
        ? manifests.map((m) => ({ object: m.object, verb: 'created (dry run)' }))
        : await withStore(opts, (store) => applyAll(store, manifests, dryRun === 'server'));
    if (format === 'json' || format === 'yaml') {
      const list = { apiVersion: 'v1', kind: 'List', items: results.map((r) => r.object) };
      process.stdout.write(format === 'json' ? formatJson(list) : formatYaml(list));
      return;
    }
    for (const r of results) process.stdout.write(`${ref(r.object)} ${r.verb}\n`);
  });
}
