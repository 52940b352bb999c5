// strait logs CLUSTER/NAMESPACE/POD [-c CONTAINER] | strait logs COMPONENT   [-f] [--tail N]
// Where the world writes them: every process of `strait status` logs JSON lines to
// <state>/logs/<component>.log (world.log: the supervisor); the workloads of every pod run
// in the pod runtime (<state>/logs/pod-runtime.log, lines carrying cluster, namespace and
// pod); an injected pod's sidecar (container istio-proxy) logs to
// <state>/mesh/<cluster>/<namespace>/<pod>.log.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { E } from '../../base/errors/index.js';
import { isAlive, resolveStateDir, takesGlobals } from '../../platform/cli-kit/index.js';
import { readWorldRecord, type WorldRecord } from '../world-file.js';

const SIDECAR = 'istio-proxy';

interface LogSource {
  file: string;
  /** keep a line (pod logs share the pod runtime's file) */
  keep?: (line: string) => boolean;
}

/** A pod by name, or the pod of a Deployment (echo → echo-<hash>-<id>) when there is exactly one. */
function resolvePodName(rec: WorldRecord | undefined, cluster: string, namespace: string, name: string): string {
  const c = rec?.clusters.find((x) => x.name === cluster);
  if (rec && !c)
    throw E.clusterUnknown(
      cluster,
      rec.clusters.map((x) => x.name),
    );
  if (!c) return name;
  const pods = c.pods.filter((p) => p.namespace === namespace);
  if (pods.some((p) => p.name === name)) return name;
  const owned = pods.filter((p) => new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[a-z0-9]+-[a-z0-9]+$`).test(p.name));
  if (owned.length === 1) return (owned[0] as { name: string }).name;
  throw E.podNotFound(`${cluster}/${namespace}/${name}`);
}

export function logSource(stateDir: string, rec: WorldRecord | undefined, target: string, container?: string): LogSource {
  const parts = target.split('/');
  if (parts.length === 3) {
    const [cluster, namespace, name] = parts as [string, string, string];
    if (!cluster || !namespace || !name) throw E.podNotFound(target);
    const pod = resolvePodName(rec, cluster, namespace, name);
    if (container === SIDECAR) return { file: join(stateDir, 'mesh', cluster, namespace, `${pod}.log`) };
    return {
      file: join(stateDir, 'logs', 'pod-runtime.log'),
      keep: (line) => {
        try {
          const o = JSON.parse(line) as { cluster?: string; namespace?: string; pod?: string };
          return o.cluster === cluster && o.namespace === namespace && o.pod === pod;
        } catch {
          return false;
        }
      },
    };
  }
  if (parts.length !== 1 || !target) throw E.usage(`strait logs takes CLUSTER/NAMESPACE/POD or a component of 'strait status', not ${JSON.stringify(target)}`);
  if (container !== undefined) throw E.usage('-c names a container of a pod: strait logs CLUSTER/NAMESPACE/POD -c CONTAINER');
  const file = join(stateDir, 'logs', `${target}.log`);
  if (!existsSync(file)) {
    const known = existsSync(join(stateDir, 'logs'))
      ? readdirSync(join(stateDir, 'logs'))
          .filter((f) => f.endsWith('.log'))
          .map((f) => f.slice(0, -4))
          .sort()
      : [];
    throw E.usage(
      `no log of ${JSON.stringify(target)} in ${join(stateDir, 'logs')}; components: ${known.join(', ') || '(none: has a world run with this state dir?)'}`,
      { target },
    );
  }
  return { file };
}

/** Read whole lines of `file` from `offset`; returns the lines and the offset after the last complete one. */
function readLines(file: string, offset: number): { lines: string[]; offset: number } {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return { lines: [], offset };
  }
  if (size < offset) offset = 0; // the file was truncated or replaced
  if (size === offset) return { lines: [], offset };
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(size - offset);
    const n = readSync(fd, buf, 0, buf.length, offset);
    const text = buf.subarray(0, n).toString('utf8');
    const end = text.lastIndexOf('\n');
    if (end < 0) return { lines: [], offset };
    return { lines: text.slice(0, end).split('\n'), offset: offset + Buffer.byteLength(text.slice(0, end + 1)) };
  } finally {
    closeSync(fd);
  }
}

export function registerLogsCommand(program: Command): void {
  takesGlobals(program.command('logs'), 'stateDir')
    .description(
      "print the logs of a pod (CLUSTER/NAMESPACE/POD, or a Deployment's pod by the Deployment's name) or of a world process (a COMPONENT of strait status, or world)",
    )
    .argument('<target>', 'CLUSTER/NAMESPACE/POD (e.g. cluster-a/default/echo) or COMPONENT (e.g. cluster-a.control, githost, world)')
    .option('-c, --container <name>', `a pod's container: its workload (default) or ${SIDECAR} (the sidecar of an injected pod)`)
    .option('-f, --follow', 'keep printing new lines until interrupted or the world stops')
    .option('--tail <lines>', 'only the last N lines (-1: all)', '-1')
    .action(async (target: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ stateDir?: string; container?: string; follow?: boolean; tail: string }>();
      const tail = Number(opts.tail);
      if (!Number.isInteger(tail) || tail < -1) throw E.usage(`--tail must be a whole number, -1 for all; got ${JSON.stringify(opts.tail)}`);
      const stateDir = resolveStateDir(opts.stateDir);
      const rec = readWorldRecord(stateDir);
      const running = rec !== undefined && isAlive(rec.pid);
      if (!running && !existsSync(join(stateDir, 'logs'))) throw E.worldNotRunning(stateDir);
      const src = logSource(stateDir, running ? rec : undefined, target, opts.container);
      const keep = src.keep ?? (() => true);
      let { lines, offset } = readLines(src.file, 0);
      lines = lines.filter(keep);
      if (tail >= 0) lines = lines.slice(Math.max(0, lines.length - tail));
      for (const l of lines) process.stdout.write(`${l}\n`);
      if (!opts.follow) return;
      await new Promise<void>((done) => {
        const timer = setInterval(() => {
          const next = readLines(src.file, offset);
          offset = next.offset;
          for (const l of next.lines) if (keep(l)) process.stdout.write(`${l}\n`);
          if (rec && !isAlive(rec.pid)) stop();
        }, 200);
        const stop = (): void => {
          clearInterval(timer);
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          done();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
