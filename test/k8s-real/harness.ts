// Helpers of the real-cluster acceptance (test/k8s-real/*.test.ts): the gate, the clusters'
// kubectl and strait's CLI from the link namespace, commands in pods, captures on the link.
import { type ChildProcess, execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../src/platform/store/index.js';

export const root = process.env['STRAIT_ROOT'] ?? process.cwd();
export const clusters = join(root, 'test', 'k8s', 'clusters.sh');
export const state = process.env['STRAIT_K8S_STATE'] ?? '/run/strait-k8s';
/** development only: use the clusters that are up (and leave them up) instead of up/down */
export const reuse = process.env['STRAIT_K8S_REUSE'] === '1';
/**
 * development only: a dist/ directory of this host mounted over the image's /opt/strait/dist
 * in every strait pod (a source change without an image build); the acceptance proper runs
 * the image as built
 */
export const devDist = process.env['STRAIT_K8S_DEV_DIST'];

/** Why the real-cluster tests cannot run here (undefined: they can). */
export function gate(): string | undefined {
  if (process.env['STRAIT_K8S_REAL'] !== '1' && process.env['STRAIT_K8S_REAL'] !== 'required')
    return 'opt-in: set STRAIT_K8S_REAL=1 (real clusters, ~4 min warm; the tools must be built first: docs/kubernetes.md)';
  if (process.getuid?.() !== 0) return 'needs root';
  for (const t of ['containerd', 'ctr', 'runc', 'etcd', 'nsenter']) {
    if (spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0) return `'${t}' is not installed (scripts/setup-system.sh)`;
  }
  if (!existsSync('/usr/lib/cni/bridge')) return 'the CNI plugins are not installed (scripts/setup-system.sh)';
  const cache = execFileSync(join(root, 'test', 'k8s', 'build-apiserver.sh'), ['--print'], { encoding: 'utf8' }).trim();
  for (const b of ['kube-apiserver', 'kubectl', 'kubelet', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy']) {
    if (!existsSync(join(cache, b))) return `${b} is not built (test/k8s/build-apiserver.sh --nodes)`;
  }
  for (const i of ['strait', 'test', 'coredns']) {
    if (!existsSync(join(cache, 'images', `${i}.tar`))) return `the ${i} image is not built (scripts/build-coredns.sh; test/k8s/build-images.sh --strait)`;
  }
  if (reuse) return existsSync(join(state, 'count')) ? undefined : `STRAIT_K8S_REUSE=1 but no clusters are up (${state})`;
  return undefined;
}

/** Taken by the test file that uses the clusters now: the files of one run take turns. */
const turnLock = `${state}.turn`;

function takeTurn(): boolean {
  try {
    mkdirSync(turnLock);
  } catch {
    let holder = NaN;
    try {
      holder = Number(readFileSync(join(turnLock, 'pid'), 'utf8'));
    } catch {
      /* being written */
    }
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      console.log(`${turnLock}: taking over from PID ${holder}, which is gone`);
      rmSync(turnLock, { recursive: true, force: true });
    }
    return false;
  }
  writeFileSync(join(turnLock, 'pid'), String(process.pid));
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The clusters for this test file, ONE bring-up for every real-cluster test file: with
 * STRAIT_K8S_REUSE=1 (test/k8s-real/ci.sh brings them up once, runs every file, then takes
 * them down) the file uses the clusters that are up; without it (one file run alone) it
 * brings them up itself (2 clusters, a second gateway node in A) and `release` takes them
 * down. Either way the files take turns (a lock beside the state directory, PID inside;
 * a holder that is gone is taken over): run-tests starts them side by side.
 */
export async function useClusters(): Promise<{ release(): void }> {
  const tWait = Date.now();
  while (!takeTurn()) await sleep(2000);
  if (Date.now() - tWait > 3000) console.log(`waited ${Math.round((Date.now() - tWait) / 1000)} s for another real-cluster file`);
  let up = false;
  const release = (): void => {
    try {
      if (up) sh(clusters, ['down'], 900_000);
    } finally {
      rmSync(turnLock, { recursive: true, force: true });
    }
  };
  try {
    if (!reuse) {
      if (existsSync(state)) throw new Error(`clusters are already up (${state}): test/k8s/clusters.sh down, or STRAIT_K8S_REUSE=1 to use them`);
      const t0 = Date.now();
      // cluster a has two gateway nodes (a-gw, a-gw2: HA); the image as cached (never a build here)
      // (the strait image: STRAIT_IMAGE_TAR, else the cached archive as it is: `up --strait` alone
      // would rebuild the image whenever its build key moved, e.g. after another checkout's build)
      const cache = sh(join(root, 'test', 'k8s', 'build-apiserver.sh'), ['--print']).trim();
      const tar = process.env['STRAIT_IMAGE_TAR'] ?? join(cache, 'images', 'strait.tar');
      up = true;
      sh('env', [`STRAIT_IMAGE_TAR=${tar}`, clusters, 'up', '2', '--strait', '--gateways', '2'], 900_000);
      console.log(`clusters up in ${Math.round((Date.now() - t0) / 1000)} s`);
    }
  } catch (err) {
    release();
    throw err;
  }
  return { release };
}

/** The host PID of a strait daemon (`gateway` or `node-agent`) on node `node` (hostNetwork: it shares the node's network namespace). */
export function daemonPid(node: string, daemon: 'gateway' | 'node-agent'): number | undefined {
  const want = run('stat', ['-L', '-c', '%i', `/run/netns/sk-${node}`]).stdout.trim();
  for (const d of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(daemon === 'gateway' ? 'dist/daemon/gateway/main.js' : 'dist/agents/node-agent/main.js'))
        continue;
      if (readlinkSync(`/proc/${d}/ns/net`) === `net:[${want}]`) return Number(d);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], timeoutMs = 120_000, cwd?: string): Run {
  const r: SpawnSyncReturns<string> = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, ...(cwd ? { cwd } : {}) });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : '') };
}

export function sh(cmd: string, args: string[], timeoutMs = 120_000, cwd?: string): string {
  const r = run(cmd, args, timeoutMs, cwd);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} -> ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

export const kubectl = (L: string, ...args: string[]): string => sh(clusters, ['kubectl', L, ...args]);
/** kubectl's argv for cluster L as one process (clusters.sh exec execs it: killing it kills kubectl) */
export const kubectlArgv = (L: string, ...args: string[]): string[] => [
  'exec',
  join(execFileSync(join(root, 'test', 'k8s', 'build-apiserver.sh'), ['--print'], { encoding: 'utf8' }).trim(), 'kubectl'),
  '--kubeconfig',
  join(state, `cluster-${L}`, 'admin.kubeconfig'),
  ...args,
];
export const kubectlRun = (L: string, ...args: string[]): Run => run(clusters, ['kubectl', L, ...args]);
export const kubeconfig = (L: string): string => join(state, `cluster-${L}`, 'admin.kubeconfig');
/** strait's CLI, in the link namespace (it reaches every API server) */
export const strait = (...args: string[]): string => sh(clusters, ['exec', process.execPath, join(root, 'bin', 'strait.js'), ...args], 180_000);
export const straitRun = (...args: string[]): Run => run(clusters, ['exec', process.execPath, join(root, 'bin', 'strait.js'), ...args], 180_000);

/** A command in a pod's first container (kubectl exec), never throwing. */
export function inPod(L: string, pod: string, cmd: string[], timeoutMs = 30_000, container?: string): Run {
  return run(clusters, ['kubectl', L, 'exec', pod, ...(container ? ['-c', container] : []), '--', ...cmd], timeoutMs);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Retry `probe` every `everyMs` until it returns a value or `timeoutMs` passes; the last value or error is in the message. */
export async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number, everyMs = 1000): Promise<T> {
  const t0 = Date.now();
  let last: unknown;
  while (Date.now() - t0 < timeoutMs) {
    try {
      const v = probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`${what}: not after ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

/** HTTP status line, headers and body of curl -i output. */
export function httpOf(out: string): { status: number; body: string } {
  const m = /^HTTP\/[0-9.]+ ([0-9]{3})/.exec(out);
  const at = out.indexOf('\r\n\r\n');
  return { status: m ? Number(m[1]) : 0, body: at >= 0 ? out.slice(at + 4).trim() : '' };
}

/**
 * A packet capture on an interface of the link namespace (tshark, else tcpdump) with a
 * capture filter, running once this resolves; stop() ends it and returns the pcap's bytes.
 */
export async function capture(iface: string, filter: string, file: string): Promise<{ stop(): Promise<Buffer>; tool: string }> {
  const tshark = spawnSync('sh', ['-c', 'command -v tshark']).status === 0;
  const tool = tshark ? 'tshark' : 'tcpdump';
  const args = tshark ? ['-n', '-i', iface, '-f', filter, '-w', file] : ['-n', '-U', '-i', iface, '-w', file, filter];
  const p = spawn(clusters, ['exec', tool, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const listening = new Promise<void>((resolve) => {
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (/Capturing on|listening on/.test(err)) resolve();
    });
    p.once('exit', () => resolve());
  });
  await Promise.race([listening, sleep(10_000)]);
  if (p.exitCode !== null) throw new Error(`${tool} ended at once: ${err}`);
  return {
    tool,
    async stop() {
      await sleep(500);
      p.kill('SIGINT');
      await new Promise<void>((r) => {
        if (p.exitCode !== null) r();
        else p.once('exit', () => r());
      });
      if (!existsSync(file)) throw new Error(`${tool} wrote no capture: ${err}`);
      return readFileSync(file);
    },
  };
}

/** Per-packet summary of a pcap file: "proto sport dport src dst" lines, by tshark or tcpdump. */
export function packetSummary(file: string, tool: string): string[] {
  if (tool === 'tshark') {
    const out = sh('tshark', [
      '-n',
      '-r',
      file,
      '-T',
      'fields',
      '-E',
      'separator=/t',
      '-e',
      'ip.src',
      '-e',
      'ip.dst',
      '-e',
      'ip.proto',
      '-e',
      'udp.srcport',
      '-e',
      'udp.dstport',
      '-e',
      'tcp.srcport',
      '-e',
      'tcp.dstport',
    ]);
    return out.split('\n').filter(Boolean);
  }
  return sh('tcpdump', ['-n', '-r', file]).split('\n').filter(Boolean);
}

/** the gateway pod on `node` and its container's restart count */
export function gatewayPodOn(L: string, node: string): { name: string; restarts: number; ready: boolean } {
  const out = kubectl(
    L,
    '-n',
    'strait-system',
    'get',
    'pods',
    '-l',
    'app.kubernetes.io/name=strait-gateway',
    '--field-selector',
    `spec.nodeName=${node}`,
    '-o',
    'jsonpath={.items[0].metadata.name} {.items[0].status.containerStatuses[0].restartCount} {.items[0].status.containerStatuses[0].ready}',
  ).trim();
  const [name = '', restarts = 'NaN', ready = ''] = out.split(' ');
  return { name, restarts: Number(restarts), ready: ready === 'true' };
}

/**
 * the longest run of failed curls: from the last success before it to the first after it (ms,
 * and when: `from`/`to` on the results' clock), and how many failed
 */
export function longestGap(results: { at: number; ok: boolean }[]): { gapMs: number; failed: number; from?: number; to?: number } {
  let best: { gapMs: number; failed: number; from?: number; to?: number } = { gapMs: 0, failed: 0 };
  let lastOk: number | undefined;
  let failed = 0;
  for (const r of results) {
    if (!r.ok) failed++;
    else {
      if (failed > 0 && lastOk !== undefined && r.at - lastOk > best.gapMs) best = { gapMs: r.at - lastOk, failed, from: lastOk, to: r.at };
      lastOk = r.at;
      failed = 0;
    }
  }
  return best;
}

/** namespace/name of the objects `kubectl get ARGS` lists in cluster L, sorted */
export function objectNames(L: 'a' | 'b', args: string[]): string[] {
  return kubectl(L, 'get', ...args, '-o', 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\n"}{end}')
    .split('\n')
    .filter(Boolean)
    .sort();
}

/** a clusterset name of the default namespace */
export const fqdn = (svc: string): string => `${svc}.default.svc.clusterset.local`;

/** `text` (YAML or JSON) written to `dir`/`file` and applied to cluster L with `kubectl apply FLAGS -f` */
export function applyFile(L: 'a' | 'b', dir: string, file: string, text: string, ...flags: string[]): void {
  writeFileSync(join(dir, file), text);
  kubectl(L, 'apply', ...flags, '-f', join(dir, file));
}

/** a ServiceExport as a user writes one (kubectl apply of a file in `dir`): the CLI's run time is no part of the product's */
export function exportOn(L: 'a' | 'b', name: string, dir: string): void {
  applyFile(
    L,
    dir,
    `export-${name}.json`,
    JSON.stringify({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name, namespace: 'default' } }),
  );
}

/**
 * One `kubectl exec` in cluster L (`target`: the pod and its flags, e.g. ['-n', NS, POD, '-c', C]):
 * each output line with the time it arrived here. Killing kubectl (clusters.sh exec execs it)
 * ends the exec, not the command in the pod: bound it there too. Registered in `running`
 * until it exits, for the file's after() to kill.
 */
export function execLines(
  L: 'a' | 'b',
  target: string[],
  cmd: string[],
  running: Set<ChildProcess>,
): { lines: { at: number; text: string }[]; exited: () => number | null | undefined; stop(): void } {
  const lines: { at: number; text: string }[] = [];
  const p = spawn(clusters, kubectlArgv(L, 'exec', ...target, '--', ...cmd), { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(p);
  let code: number | null | undefined;
  p.once('exit', (c) => {
    code = c;
    running.delete(p);
  });
  let buf = '';
  const take = (d: Buffer): void => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      lines.push({ at: Date.now(), text: buf.slice(0, nl).trim() });
      buf = buf.slice(nl + 1);
    }
  };
  p.stdout?.on('data', take);
  p.stderr?.on('data', take);
  return { lines, exited: () => code, stop: () => p.kill() };
}

/**
 * A watch of objects at an API path of cluster L (kubectl get --raw ...?watch=1): every event
 * with the time it came (Date.now()'s clock), started again when the API server ends it.
 */
export class ObjectWatch {
  readonly events: { at: number; type: string; object: KubeObject }[] = [];
  private p: ChildProcess;
  private buf = '';
  private stopped = false;
  constructor(
    readonly L: 'a' | 'b',
    private readonly path: string,
  ) {
    this.p = this.start();
  }
  private start(): ChildProcess {
    this.buf = '';
    const sep = this.path.includes('?') ? '&' : '?';
    // each line stamped with the kernel's uptime as it arrives (a shell loop beside kubectl):
    // this process's own clock would say when its event loop got to it, late by as long as a
    // synchronous kubectl call blocked it. Not awk: mawk fills its input buffer from a pipe
    // before it prints a line, so events came minutes late (or at the watch's end)
    const stamp = `while IFS= read -r l; do read -r u _ < /proc/uptime; printf '%s %s\\n' "$u" "$l"; done`;
    const argv = kubectlArgv(this.L, 'get', '--raw', `${this.path}${sep}watch=1&resourceVersion=0`).slice(1);
    const p = spawn(clusters, ['exec', 'sh', '-c', `"$@" | ${stamp}`, 'sh', ...argv], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
    // started again after a pause (an API server that is down ends it at once, again and again)
    p.once('exit', () => {
      if (!this.stopped) setTimeout(() => !this.stopped && (this.p = this.start()), 1000).unref();
    });
    p.stdout?.on('data', (d: Buffer) => {
      this.buf += d.toString();
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const sp = line.indexOf(' ');
        const ev = JSON.parse(line.slice(sp + 1)) as { type: string; object: KubeObject };
        const at = Number(line.slice(0, sp)) * 1000 + (Date.now() - uptimeMs());
        if (ev.type !== 'ERROR') this.events.push({ at, type: ev.type, object: ev.object });
      }
    });
    return p;
  }
  /** the events since `since`, one line each: time, type, name and what `summary` says of the object */
  timeline(since: number, summary: (o: KubeObject) => string): string[] {
    return this.events
      .filter((e) => e.at >= since)
      .map((e) => `${new Date(e.at).toISOString().slice(11, 23)} ${e.type} ${e.object.metadata.name}: ${summary(e.object)}`);
  }
  stop(): void {
    this.stopped = true;
    try {
      if (this.p.pid) process.kill(-this.p.pid); // kubectl and awk with it
    } catch {
      /* gone */
    }
  }
}

/** the kernel's uptime, ms (a pod's /proc/uptime is this host's) */
export const uptimeMs = (): number => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;

/**
 * A githost administrator in cluster L, made with the server's own tool inside its pod (the
 * only way to make the first one: docs/githost.md); its access token.
 */
export function githostAdmin(L: 'a' | 'b', username: string, password: string, email: string): string {
  const created = kubectl(
    L,
    '-n',
    'strait-system',
    'exec',
    'deploy/strait-githost',
    '--',
    'node',
    'bin/strait.js',
    'admin',
    'user',
    'create',
    '--username',
    username,
    '--password',
    password,
    '--email',
    email,
    '--admin',
    '--access-token',
    '--state-dir',
    '/var/lib/strait',
    '-o',
    'json',
  );
  return (JSON.parse(created) as { token: string }).token;
}
