// strait app get|sync|list: Applications of the control module (GitOps).
import type { Command } from 'commander';
import type { Application } from '../control/index.js';
import { call } from './control-client.js';
import { E } from '../../base/errors/index.js';
import { formatJson, formatTable, formatYaml, parseOutputFormat } from '../../platform/cli-kit/index.js';

const short = (rev: string | undefined): string => (rev ? rev.slice(0, 12) : '');

/**
 * The last operation, with the revision it was about; when it failed for another revision than
 * the one the Application is now compared to, say so (the current target may be Synced).
 */
export function lastSync(a: Application): string {
  const op = a.status?.operationState;
  if (!op) return '<none>';
  const rev = op.operation?.sync.revision ?? op.syncResult?.revision;
  let text = `${op.phase}${rev ? ` at ${short(rev)}` : ''}: ${op.message}`;
  const current = a.status?.sync;
  if (op.phase !== 'Succeeded' && rev && current?.revision && current.revision !== rev && current.status !== 'Sync Error') {
    text += ` (an earlier target; the current one, ${short(current.revision)}, is ${current.status ?? 'Unknown'})`;
  }
  return text;
}

/** The last revision that synced: the last successful operation's, else the newest in the history. */
export function lastGoodRevision(a: Application): string | undefined {
  return a.status?.operationState?.syncResult?.revision ?? a.status?.history?.at(-1)?.revision;
}

/**
 * Why the current revision is not synced, in a word: the signature verdict when the project
 * refused it for that, else the reason of the error condition ("FetchFailed").
 */
function refusal(a: Application): string | undefined {
  const s = a.status ?? {};
  const sig = s.signature;
  if (sig?.enforced && sig.status !== 'valid' && (sig.objectSHA === s.sync?.revision || sig.failedCommit !== undefined)) return `refused: ${sig.status}`;
  const c = (s.conditions ?? []).find((x) => /Error$/.test(x.type));
  return c ? (s.sync?.status === 'Sync Error' ? `refused: ${c.reason ?? c.type}` : (c.reason ?? c.type)) : undefined;
}

/**
 * The sync status about the revision the target resolves to now, with the last good
 * revision beside it, labelled, when that is another one:
 * "Sync Error to ae0792f… (refused: unsigned); last good: eaa4b3e…".
 */
export function syncText(a: Application, rev: (r: string) => string = (r) => r): string {
  const sync = a.status?.sync;
  const status = sync?.status ?? 'Unknown';
  let text = `${status}${sync?.revision ? ` to ${rev(sync.revision)}` : ''}`;
  if (status === 'Synced' || status === 'OutOfSync') return text;
  const why = refusal(a);
  if (why) text += ` (${why})`;
  const good = lastGoodRevision(a);
  if (good && good !== sync?.revision) text += `; last good: ${rev(good)}`;
  return text;
}

function describe(a: Application): string {
  const s = a.status ?? {};
  const lines = [
    ['Name:', a.metadata.name],
    ['Project:', a.spec?.project ?? 'default'],
    ['Server:', a.spec?.destination?.server ?? ''],
    ['Namespace:', a.spec?.destination?.namespace ?? ''],
    ['Repo:', a.spec?.source?.repoURL ?? ''],
    ['Target:', a.spec?.source?.targetRevision ?? 'HEAD'],
    ['Path:', a.spec?.source?.path ?? ''],
    ['Sync Policy:', a.spec?.syncPolicy?.automated ? 'Automated' + (a.spec.syncPolicy.automated.prune ? ' (Prune)' : '') : '<none>'],
    ['Sync Status:', syncText(a)],
    ['Health Status:', s.health?.status ?? 'Unknown'],
    [
      'Signature:',
      s.signature
        ? `${s.signature.status}${s.signature.keyID ? ` (key ${s.signature.keyID}${s.signature.signer ? `, ${s.signature.signer}` : ''})` : ''}${s.signature.enforced ? ', enforced' : ''}`
        : '<none>',
    ],
    ['Last Sync:', lastSync(a)],
  ];
  let out = lines.map(([k, v]) => `${(k ?? '').padEnd(18)}${v}`).join('\n') + '\n';
  if ((s.conditions ?? []).length > 0) {
    out +=
      '\n' +
      formatTable(
        ['CONDITION', 'MESSAGE', 'LAST TRANSITION'],
        (s.conditions ?? []).map((c) => [c.type, c.message, c.lastTransitionTime]),
      );
  }
  if ((s.resources ?? []).length > 0) {
    out +=
      '\n' +
      formatTable(
        ['GROUP', 'KIND', 'NAMESPACE', 'NAME', 'STATUS'],
        (s.resources ?? []).map((r) => [r.group, r.kind, r.namespace, r.name, r.status]),
      );
  }
  return out;
}

function print(a: Application, output: string): void {
  const format = parseOutputFormat(output, ['text', 'wide', 'json', 'yaml']);
  if (format === 'json') process.stdout.write(formatJson(a));
  else if (format === 'yaml') process.stdout.write(formatYaml(a));
  else process.stdout.write(describe(a));
}

export function registerAppCommand(program: Command): void {
  const app = program.command('app').description('inspect and sync GitOps Applications');
  app
    .command('get')
    .description('show an Application and its sync, signature and resource status')
    .argument('<name>')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option('--refresh', 'compare with Git now before showing', false)
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (name: string, opts: { output: string; refresh: boolean; server?: string }) => {
      print(
        await call<Application>('GET', `/api/v1/applications/${encodeURIComponent(name)}${opts.refresh ? '?refresh=normal' : ''}`, undefined, opts.server),
        opts.output,
      );
    });
  app
    .command('sync')
    .description('sync an Application now (refused when its revision is not signed as its project requires)')
    .argument('<name>')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (name: string, opts: { output: string; server?: string }) => {
      const a = await call<Application>('POST', `/api/v1/applications/${encodeURIComponent(name)}/sync`, {}, opts.server);
      print(a, opts.output);
      const op = a.status?.operationState;
      // the Application on stdout, why the sync did not happen on stderr (exit 1)
      if (op?.phase !== 'Succeeded') {
        const why = op?.message ?? a.status?.conditions?.find((c) => /Error$/.test(c.type))?.message ?? 'no sync result';
        throw E.syncFailed(name, op?.operation?.sync.revision ?? a.status?.sync?.revision, why);
      }
    });
  app
    .command('list')
    .description('list Applications')
    .option('-o, --output <format>', 'text, json or yaml', 'text')
    .option('--server <server>', 'control module (default: the current session)')
    .action(async (opts: { output: string; server?: string }) => {
      const format = parseOutputFormat(opts.output, ['text', 'wide', 'json', 'yaml']);
      const list = await call<{ items: Application[] }>('GET', '/api/v1/applications', undefined, opts.server);
      if (format === 'json') return void process.stdout.write(formatJson(list.items));
      if (format === 'yaml') return void process.stdout.write(formatYaml(list.items));
      // REVISION is the one the target resolves to now (a refused one too); LAST GOOD the last that synced
      process.stdout.write(
        formatTable(
          ['NAME', 'PROJECT', 'SYNC STATUS', 'REVISION', 'LAST GOOD', 'SIGNATURE', 'MESSAGE'],
          list.items.map((a) => [
            a.metadata.name,
            a.spec?.project ?? 'default',
            a.status?.sync?.status ?? 'Unknown',
            a.status?.sync?.revision?.slice(0, 12),
            short(lastGoodRevision(a)) || '<none>',
            a.status?.signature?.status,
            a.status?.operationState?.message,
          ]),
        ),
      );
    });
}
