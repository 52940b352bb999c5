// strait describe KIND NAME [-n NS]: the object's fields, its status conditions and its Events.
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { E } from '../../base/errors/index.js';
import { findKind } from '../../platform/resources/index.js';
import type { KubeObject } from '../../platform/store/index.js';
import { addStoreOptions, formatAge, formatTable, type StoreCliOptions, withStore } from '../../platform/cli-kit/index.js';

const indent = (text: string, n: number): string =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');
const mapLines = (m: Record<string, string> | undefined): string =>
  m && Object.keys(m).length
    ? Object.entries(m)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n' + ' '.repeat(13))
    : '<none>';

export function describeObject(o: KubeObject, events: KubeObject[]): string {
  const lines: string[] = [];
  const field = (k: string, v: string | undefined) => lines.push(`${`${k}:`.padEnd(13)}${v ?? '<none>'}`);
  field('Name', o.metadata.name);
  if (o.metadata.namespace) field('Namespace', o.metadata.namespace);
  field('Labels', mapLines(o.metadata.labels));
  field('Annotations', mapLines(o.metadata.annotations));
  field('API Version', o.apiVersion);
  field('Kind', o.kind);
  field('Created', o.metadata.creationTimestamp);
  field('Generation', o.metadata.generation === undefined ? undefined : String(o.metadata.generation));
  const { apiVersion: _a, kind: _k, metadata: _m, status, ...rest } = o;
  for (const [k, v] of Object.entries(rest)) {
    lines.push(`${k[0]!.toUpperCase()}${k.slice(1)}:`);
    lines.push(indent(stringify(v, { lineWidth: 0 }), 2));
  }
  const conditions = (status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions;
  if (status !== undefined) {
    const { conditions: _c, ...otherStatus } = status as Record<string, unknown>;
    if (Object.keys(otherStatus).length) {
      lines.push('Status:');
      lines.push(indent(stringify(otherStatus, { lineWidth: 0 }), 2));
    }
  }
  if (Array.isArray(conditions) && conditions.length) {
    lines.push('Conditions:');
    lines.push(
      indent(
        formatTable(
          ['TYPE', 'STATUS', 'REASON', 'LAST TRANSITION', 'MESSAGE'],
          conditions.map((c) => [
            String(c['type'] ?? ''),
            String(c['status'] ?? ''),
            c['reason'] as string | undefined,
            c['lastTransitionTime'] as string | undefined,
            c['message'] as string | undefined,
          ]),
        ),
        2,
      ),
    );
  }
  if (events.length === 0) lines.push('Events:      <none>');
  else {
    lines.push('Events:');
    const sorted = [...events].sort((a, b) => String(a['lastTimestamp']).localeCompare(String(b['lastTimestamp'])));
    lines.push(
      indent(
        formatTable(
          ['TYPE', 'REASON', 'AGE', 'FROM', 'MESSAGE'],
          sorted.map((e) => {
            const cnt = typeof e['count'] === 'number' && e['count'] > 1 ? ` (x${e['count']} over ${formatAge(e['firstTimestamp'])})` : '';
            return [
              e['type'] as string,
              e['reason'] as string,
              `${formatAge(e['lastTimestamp'])}${cnt}`,
              (e['source'] as { component?: string } | undefined)?.component,
              e['message'] as string,
            ];
          }),
        ),
        2,
      ),
    );
  }
  return lines.join('\n') + '\n';
}

interface DescribeOptions extends StoreCliOptions {
  namespace?: string;
}

export function registerDescribeCommand(program: Command): void {
  addStoreOptions(
    program
      .command('describe')
      .description('show one object in detail: fields, status conditions and Events')
      .argument('<kind>', 'kind, e.g. pod, serviceexport, application')
      .argument('<name>', 'name of the object')
      .option('-n, --namespace <ns>', 'namespace (default "default")'),
  ).action(async (kindArg: string, name: string, _opts: unknown, cmd: Command) => {
    const opts = cmd.optsWithGlobals<DescribeOptions>();
    const info = findKind(kindArg);
    const ns = info.namespaced ? (opts.namespace ?? 'default') : undefined;
    await withStore(opts, async (store) => {
      const o = await store.get({ apiVersion: info.apiVersion, kind: info.kind }, name, ns);
      if (!o) throw E.notFound(info.kind, name, ns);
      const evs = (await store.list({ apiVersion: 'v1', kind: 'Event' }, { namespace: ns ?? 'default' })).items.filter((e) => {
        const io = e['involvedObject'] as { kind?: string; name?: string; uid?: string } | undefined;
        return io?.kind === info.kind && io.name === name && (!io.uid || !o.metadata.uid || io.uid === o.metadata.uid);
      });
      process.stdout.write(describeObject(o, evs));
    });
  });
}
