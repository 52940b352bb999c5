// Scale: how each cost of a local world grows with the number of clusters N (full mesh of
// PSK tunnels, every cluster joined through the broker) and of exported services M.
// For each N it boots a world of N clusters (a gateway and a worker node each; no mesh,
// no code-hosting server: the multicluster parts alone), then exports services in steps up
// to each M (service i from cluster i mod N), and measures:
//   - time to ready, processes, memory (RSS and PSS from /proc/<pid>/smaps_rollup) per
//     process kind and per cluster;
//   - tunnels connected and handshakes (each gateway's /metrics);
//   - convergence: every one of the M names answers in every cluster that imports it;
//   - export -> answer: a ServiceExport of an existing Service, then its name asked of every
//     other cluster's DNS every 2 ms until it answers (p50/p99 over all (export, cluster) pairs);
//   - DNS answers/s of one cluster's clusterset.local server with the whole zone;
//   - CPU at idle: CPU time of every process of the world over a quiet window.
// The DNS and HTTP probes run in a child of this process inside the world's root network
// namespace (nsenter), which routes to every cluster's DNS and every node.
// Bounded: a hard overall deadline, a timeout per step, and it stops growing the world when
// the machine's available memory would fall under a floor (or the world passes a ceiling).
//   node dist/bench/scale.js [--n 2,4,8,16] [--m 10,100,1000] [--samples 10] [--idle-s 10]
//                            [--deadline-min 50] [--mem-ceiling-gib 20]
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connectStoreFromFiles, type KubeObject, type ResourceStore } from '../src/platform/store/index.js';
import { memoryOf, worldPids } from './world-procs.js';

const root = join(new URL('.', import.meta.url).pathname, '..', '..');
const BIN = join(root, 'bin', 'strait.js');
const SELF = new URL(import.meta.url).pathname;
const arg = (name: string, d: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? d) : d;
};
const list = (s: string): number[] =>
  s
    .split(',')
    .map(Number)
    .filter((x) => Number.isInteger(x) && x > 0);

// ---------------------------------------------------------------------------------------
// the probe: runs inside the world's root network namespace; JSON lines in, JSON lines out
// ---------------------------------------------------------------------------------------

const epoch = (): number => performance.timeOrigin + performance.now();

/** A DNS query for an A record (RFC 1035 4.1), id in the first two bytes. */
function dnsQuery(id: number, name: string): Buffer {
  const labels = name.split('.').filter(Boolean);
  const q = Buffer.alloc(12 + labels.reduce((n, l) => n + l.length + 1, 0) + 1 + 4);
  q.writeUInt16BE(id, 0);
  q.writeUInt16BE(0x0100, 2); // RD
  q.writeUInt16BE(1, 4); // QDCOUNT
  let o = 12;
  for (const l of labels) {
    q[o++] = l.length;
    o += q.write(l, o, 'ascii');
  }
  q[o++] = 0;
  q.writeUInt16BE(1, o); // A
  q.writeUInt16BE(1, o + 2); // IN
  return q;
}
/** NOERROR with at least one answer */
const answered = (r: Buffer): boolean => r.length >= 12 && (r.readUInt16BE(2) & 0x000f) === 0 && r.readUInt16BE(6) > 0;

interface Pending {
  server: string;
  name: string;
  sent: number;
  done: (ok: boolean) => void;
}

/** One UDP socket for every query of the probe; ids route the answers. */
class Resolver {
  private readonly sock = createSocket('udp4');
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  constructor() {
    this.sock.on('message', (msg) => {
      const p = this.pending.get(msg.readUInt16BE(0));
      if (!p) return;
      this.pending.delete(msg.readUInt16BE(0));
      p.done(answered(msg));
    });
    // lost queries: given up after 250 ms (the caller asks again)
    setInterval(() => {
      const old = performance.now() - 250;
      for (const [id, p] of this.pending)
        if (p.sent < old) {
          this.pending.delete(id);
          p.done(false);
        }
    }, 50).unref();
  }
  ask(server: string, name: string): Promise<boolean> {
    return new Promise((done) => {
      let id = this.nextId;
      while (this.pending.has(id)) id = (id % 65535) + 1;
      this.nextId = (id % 65535) + 1;
      this.pending.set(id, { server, name, sent: performance.now(), done });
      this.sock.send(dnsQuery(id, name), 53, server);
    });
  }
  get inFlight(): number {
    return this.pending.size;
  }
}

/** Ask `name` of `server` every `everyMs` until it answers; resolves with the epoch time of the answer, or undefined at the deadline. */
async function untilAnswered(r: Resolver, server: string, name: string, deadline: number, everyMs: number): Promise<number | undefined> {
  while (epoch() < deadline) {
    if (await r.ask(server, name)) return epoch();
    await new Promise((res) => setTimeout(res, everyMs));
  }
  return undefined;
}

function httpText(url: string): Promise<string> {
  return new Promise((resolve) => {
    const req = get(url, { timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve(body));
    });
    req.on('error', () => resolve(''));
    req.on('timeout', () => req.destroy());
  });
}

async function runProbe(): Promise<void> {
  const r = new Resolver();
  const out = (o: unknown): void => {
    process.stdout.write(JSON.stringify(o) + '\n');
  };
  for await (const line of createInterface({ input: process.stdin })) {
    const m = JSON.parse(line) as { id: number; op: string; [k: string]: unknown };
    const deadline = epoch() + Number(m['timeoutMs'] ?? 60_000);
    if (m.op === 'wait') {
      // one name, several servers: when each answered first (epoch ms)
      const servers = m['servers'] as string[];
      void Promise.all(servers.map((s) => untilAnswered(r, s, m['name'] as string, deadline, 2))).then((at) => out({ id: m.id, at }));
      out({ id: m.id, started: true });
    } else if (m.op === 'all') {
      // many (server, name) pairs, a bounded number in flight: how many answered
      const pairs = m['pairs'] as [string, string][];
      let next = 0;
      let ok = 0;
      const worker = async (): Promise<void> => {
        while (next < pairs.length) {
          const [s, n] = pairs[next++] as [string, string];
          if ((await untilAnswered(r, s, n, deadline, 20)) !== undefined) ok++;
        }
      };
      void Promise.all(Array.from({ length: 128 }, worker)).then(() => out({ id: m.id, ok, total: pairs.length }));
    } else if (m.op === 'flood') {
      // as many queries as answers come back, `concurrency` in flight, for durationMs
      const names = m['names'] as string[];
      const server = m['server'] as string;
      const end = performance.now() + Number(m['durationMs']);
      let sent = 0;
      let ok = 0;
      const worker = async (): Promise<void> => {
        while (performance.now() < end) {
          sent++;
          if (await r.ask(server, names[sent % names.length] as string)) ok++;
        }
      };
      const t0 = performance.now();
      void Promise.all(Array.from({ length: Number(m['concurrency']) }, worker)).then(() => out({ id: m.id, sent, ok, ms: performance.now() - t0 }));
    } else if (m.op === 'http') {
      void Promise.all((m['urls'] as string[]).map(httpText)).then((bodies) => out({ id: m.id, bodies }));
    }
  }
}

// ---------------------------------------------------------------------------------------
// the bench
// ---------------------------------------------------------------------------------------

class Probe {
  private readonly child: ChildProcess;
  private readonly waiters = new Map<number, (m: Record<string, unknown>) => void>();
  private readonly started = new Map<number, () => void>();
  private id = 0;
  constructor(supervisorPid: number) {
    this.child = spawn('nsenter', ['-t', String(supervisorPid), '-n', '--', process.execPath, SELF, '--probe'], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const m = JSON.parse(line) as { id: number; started?: boolean };
      if (m.started) {
        this.started.get(m.id)?.();
        this.started.delete(m.id);
        return;
      }
      this.waiters.get(m.id)?.(m);
      this.waiters.delete(m.id);
    });
  }
  call(op: string, args: Record<string, unknown>, onStarted?: () => void): Promise<Record<string, unknown>> {
    const id = ++this.id;
    if (onStarted) this.started.set(id, onStarted);
    return new Promise((resolve) => {
      this.waiters.set(id, resolve);
      this.child.stdin!.write(JSON.stringify({ id, op, ...args }) + '\n');
    });
  }
  close(): void {
    this.child.kill();
  }
}

interface Proc {
  pid: number;
  kind: string;
  cluster?: string;
}

/** Every process of a world, with its kind. */
function worldProcs(sid: number): Proc[] {
  return worldPids(sid).map((pid) => ({ pid, ...kindOf(pid) }));
}

/** What a process is: from STRAIT_PROC (<cluster>.<node>.<kind> or <cluster>.<kind>) or its command line. */
function kindOf(pid: number): { kind: string; cluster?: string } {
  let cmd = '';
  let proc = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    /* gone */
  }
  try {
    proc =
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('STRAIT_PROC='))
        ?.slice(12) ?? '';
  } catch {
    /* gone */
  }
  if (/\bstrait\.js up\b/.test(cmd)) return { kind: 'strait up' };
  if (/^(unshare|nsenter) /.test(cmd)) return { kind: cmd.split(' ')[0] as string };
  if (proc === 'world') return { kind: 'world supervisor' };
  if (proc === '') return { kind: cmd.split(' ')[0]?.split('/').pop() ?? '?' };
  const parts = proc.split('.');
  if (parts.length === 1) return { kind: proc };
  return { kind: parts[parts.length - 1] as string, cluster: parts[0] as string };
}

/** CPU time (user + system) of a process in seconds */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
  } catch {
    return 0;
  }
}

function memAvailable(): number {
  const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

interface KindRow {
  kind: string;
  count: number;
  rss: number;
  pss: number;
  cpu: number;
}

function memoryByKind(procs: Proc[]): { total: { rss: number; pss: number; count: number }; kinds: KindRow[] } {
  const kinds = new Map<string, KindRow>();
  let rss = 0;
  let pss = 0;
  for (const p of procs) {
    const m = memoryOf(p.pid);
    rss += m.rss;
    pss += m.pss;
    const k = kinds.get(p.kind) ?? { kind: p.kind, count: 0, rss: 0, pss: 0, cpu: 0 };
    k.count++;
    k.rss += m.rss;
    k.pss += m.pss;
    kinds.set(p.kind, k);
  }
  return { total: { rss, pss, count: procs.length }, kinds: [...kinds.values()].sort((a, b) => b.pss - a.pss) };
}

/** CPU over a quiet window: seconds of CPU per second of wall time (1.0 = one core), per kind. */
async function idleCpu(procs: Proc[], seconds: number): Promise<{ total: number; kinds: Map<string, number> }> {
  const before = new Map(procs.map((p) => [p.pid, cpuOf(p.pid)]));
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const wall = (performance.now() - t0) / 1000;
  const kinds = new Map<string, number>();
  let total = 0;
  for (const p of procs) {
    const d = Math.max(0, cpuOf(p.pid) - (before.get(p.pid) ?? 0)) / wall;
    total += d;
    kinds.set(p.kind, (kinds.get(p.kind) ?? 0) + d);
  }
  return { total, kinds };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

class Timeout extends Error {}
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Timeout(`${what}: no result within ${(ms / 1000).toFixed(0)} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const pct = (xs: number[], q: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const mib = (b: number): string => (b / 1048576).toFixed(0);
const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-');
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

function worldFile(n: number): unknown {
  return {
    tunnels: true,
    githost: false,
    mesh: false,
    clusters: Array.from({ length: n }, (_, i) => ({
      name: `c${String(i + 1).padStart(2, '0')}`,
      clusterCIDR: `10.${i + 1}.0.0/16`,
      serviceCIDR: `100.${i + 1}.0.0/16`,
      nodes: [
        { name: 'gateway', role: 'gateway' },
        { name: 'worker', role: 'worker' },
      ],
      workloads: [],
    })),
  };
}

interface WorldRec {
  supervisorPid: number;
  store: { socket: string; token: string };
  clusters: { name: string; dnsServer: string; nodes: { role: string; underlayIP: string }[] }[];
}

interface Running {
  child: ChildProcess;
  stateDir: string;
  rec: WorldRec;
  probe: Probe;
  stores: Map<string, ResourceStore>;
  readyMs: number;
}

async function boot(n: number, dir: string, timeoutMs: number): Promise<Running> {
  const stateDir = mkdtempSync(join(dir, `n${n}-`));
  const file = join(dir, `world-${n}.json`);
  writeFileSync(file, JSON.stringify(worldFile(n)));
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'up', '--state-dir', stateDir, '--world', file], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    const on = (b: Buffer): void => {
      out += b.toString();
      if (/world ready/.test(out)) resolve();
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.on('exit', (c) => reject(new Error(`strait up exited ${c}: ${out.slice(-2000)}`)));
  });
  try {
    await within(timeoutMs, `N=${n}: strait up`, ready);
  } catch (err) {
    await stop({ child, stateDir } as Running).catch(() => undefined);
    throw err;
  }
  const readyMs = performance.now() - t0;
  child.removeAllListeners('exit');
  const rec = JSON.parse(readFileSync(join(stateDir, 'world.json'), 'utf8')) as WorldRec;
  const stores = new Map<string, ResourceStore>();
  for (const c of rec.clusters) stores.set(c.name, connectStoreFromFiles({ socketPath: rec.store.socket, tokenFile: rec.store.token, cluster: c.name }));
  return { child, stateDir, rec, probe: new Probe(rec.supervisorPid), stores, readyMs };
}

/** a failed step's world: its logs are kept (the state dir goes) */
let keepLogs = false;

async function stop(w: Running): Promise<void> {
  w.probe?.close();
  for (const s of w.stores?.values() ?? []) await s.close().catch(() => undefined);
  if (w.child.exitCode === null && w.child.signalCode === null) {
    const exited = new Promise((r) => w.child.once('exit', r));
    w.child.kill('SIGTERM');
    const kill = setTimeout(() => {
      try {
        process.kill(-(w.child.pid as number), 'SIGKILL');
      } catch {
        /* gone */
      }
    }, 30_000);
    await exited;
    clearTimeout(kill);
  }
  if (keepLogs) {
    const to = mkdtempSync(join(tmpdir(), 'strait-scale-logs-'));
    cpSync(join(w.stateDir, 'logs'), to, { recursive: true });
    console.log(`   the world's logs are kept in ${to}`);
    keepLogs = false;
  }
  rmSync(w.stateDir, { recursive: true, force: true });
}

const NS = 'scale';
const dnsIP = (c: { dnsServer: string }): string => c.dnsServer.split(':')[0] as string;
const fqdn = (name: string): string => `${name}.${NS}.svc.clusterset.local`;

const createService = (store: ResourceStore, name: string): Promise<unknown> =>
  store.apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  } as KubeObject);
const createExport = (store: ResourceStore, name: string): Promise<unknown> =>
  store.apply({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name, namespace: NS } } as KubeObject);

async function exportService(store: ResourceStore, name: string): Promise<void> {
  await createService(store, name);
  await createExport(store, name);
}

async function unexportService(store: ResourceStore, name: string): Promise<void> {
  await store.delete({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport' }, name, NS);
  await store.delete({ apiVersion: 'v1', kind: 'Service' }, name, NS);
}

/** Run jobs with at most `width` in flight. */
async function bounded<T>(items: T[], width: number, job: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await job(items[next++] as T);
    }),
  );
}

/** Tunnels connected (gauge 1) and handshakes completed/initiated over every gateway. */
async function tunnelFigures(w: Running): Promise<{ connected: number; expected: number; completed: number; initiated: number; timeouts: number }> {
  const urls = w.rec.clusters.map((c) => `http://${c.nodes.find((x) => x.role === 'gateway')?.underlayIP}:9464/metrics`);
  const r = await w.probe.call('http', { urls });
  let connected = 0;
  let completed = 0;
  let initiated = 0;
  let timeouts = 0;
  const sum = (body: string, re: RegExp): number => [...body.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  for (const body of r['bodies'] as string[]) {
    connected += sum(body, /^strait_tunnel_connected\{[^}]*\} (\S+)$/gm);
    completed += sum(body, /^strait_tunnel_handshakes_total\{event="completed"\} (\S+)$/gm);
    initiated += sum(body, /^strait_tunnel_handshakes_total\{event="initiated"\} (\S+)$/gm);
    timeouts += sum(body, /^strait_tunnel_handshakes_total\{event="timeout"\} (\S+)$/gm);
  }
  const n = w.rec.clusters.length;
  // each tunnel is counted by both of its gateways
  return { connected: connected / 2, expected: (n * (n - 1)) / 2, completed, initiated, timeouts };
}

interface BootRow {
  n: number;
  readyMs: number;
  procs: number;
  rss: number;
  pss: number;
  tunnels: string;
  handshakes: string;
  idle: number;
  load: string;
}
interface StepRow {
  n: number;
  m: number;
  convergeS: number;
  convergeOk: string;
  p50: number;
  p99: number;
  samples: number;
  qps: number;
  idle: number;
  pss: number;
  rss: number;
  supervisorPss: number;
  mcPss: number;
  gwPss: number;
  load: string;
  note?: string;
}

async function main(): Promise<void> {
  const Ns = list(arg('--n', '2,4,8,16'));
  const Ms = list(arg('--m', '10,100,1000')).sort((a, b) => a - b);
  const SAMPLES = Number(arg('--samples', '10'));
  const IDLE_S = Number(arg('--idle-s', '10'));
  const deadline = Date.now() + Number(arg('--deadline-min', '50')) * 60_000;
  const CEILING = Number(arg('--mem-ceiling-gib', '20')) * 2 ** 30;
  const FLOOR = 2 * 2 ** 30; // keep this much of the machine's memory available to others
  const left = (): number => deadline - Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'strait-scale-'));
  const boots: BootRow[] = [];
  const steps: StepRow[] = [];
  const kindTables = new Map<number, { kinds: KindRow[]; m: number }>();
  const notes: string[] = [];
  console.log(`scale: N = ${Ns.join(', ')} clusters; M = ${Ms.join(', ')} exported services; ${SAMPLES} probe exports per step; idle window ${IDLE_S} s`);
  console.log(`machine: ${availableParallelism()} cores, ${mib(memAvailable())} MiB available; load average ${load()} at start`);

  let running: Running | undefined;
  const cleanup = async (): Promise<void> => {
    if (running) {
      const w = running;
      running = undefined;
      await stop(w).catch(() => undefined);
    }
  };
  process.on('SIGINT', () => {
    void cleanup().then(() => process.exit(130));
  });
  process.on('SIGTERM', () => {
    void cleanup().then(() => process.exit(143));
  });

  outer: for (const n of Ns) {
    // a rough need from the last world: stop before the machine runs short
    const last = boots[boots.length - 1];
    const need = last ? (last.rss / last.n) * n * 1.5 : 0;
    if (need > CEILING || memAvailable() - need < FLOOR) {
      notes.push(`N=${n} not run: about ${mib(need)} MiB needed, ${mib(memAvailable())} MiB available (floor ${mib(FLOOR)} MiB, ceiling ${mib(CEILING)} MiB)`);
      break;
    }
    if (left() < 120_000) {
      notes.push(`N=${n} not run: overall deadline`);
      break;
    }
    console.log(`\n-- N=${n}: booting (load ${load()})`);
    let w: Running;
    try {
      w = await boot(n, dir, Math.min(left(), 10 * 60_000));
    } catch (err) {
      notes.push(`N=${n}: boot failed: ${(err as Error).message.split('\n')[0]}`);
      console.log(`   boot failed: ${(err as Error).message.slice(0, 1500)}`);
      break;
    }
    running = w;
    try {
      const procsAt = (): Proc[] => worldProcs(w.child.pid as number);
      await sleep(2000);
      const tun = await within(30_000, 'tunnel figures', tunnelFigures(w));
      const mem0 = memoryByKind(procsAt());
      const idle0 = await idleCpu(procsAt(), IDLE_S);
      boots.push({
        n,
        readyMs: w.readyMs,
        procs: mem0.total.count,
        rss: mem0.total.rss,
        pss: mem0.total.pss,
        tunnels: `${tun.connected}/${tun.expected}`,
        handshakes: `${tun.completed}/${tun.initiated}${tun.timeouts ? ` (${tun.timeouts} timeouts)` : ''}`,
        idle: idle0.total,
        load: load(),
      });
      kindTables.set(n, { kinds: mem0.kinds.map((k) => ({ ...k, cpu: idle0.kinds.get(k.kind) ?? 0 })), m: 0 });
      console.log(
        `   ready in ${(w.readyMs / 1000).toFixed(1)} s; ${mem0.total.count} processes, PSS ${mib(mem0.total.pss)} MiB; tunnels ${tun.connected}/${tun.expected}; idle CPU ${(idle0.total * 100).toFixed(1)}% of a core`,
      );
      const clusters = w.rec.clusters;
      let exported = 0;
      for (const m of Ms) {
        if (left() < 60_000) {
          notes.push(`N=${n} M=${m} not run: overall deadline`);
          break outer;
        }
        const stepLimit = Math.min(left() - 30_000, 15 * 60_000);
        const row: StepRow = {
          n,
          m,
          convergeS: NaN,
          convergeOk: '-',
          p50: NaN,
          p99: NaN,
          samples: 0,
          qps: NaN,
          idle: NaN,
          pss: NaN,
          rss: NaN,
          supervisorPss: NaN,
          mcPss: NaN,
          gwPss: NaN,
          load: '',
        };
        steps.push(row);
        try {
          // 1. the services of this step, each from one cluster (i mod N); convergence: every name answers everywhere
          const names = Array.from({ length: m - exported }, (_, j) => exported + j);
          const t0 = performance.now();
          await within(
            stepLimit,
            `N=${n} M=${m}: exporting`,
            bounded(names, 16, (i) => exportService(w.stores.get(clusters[i % n]?.name as string) as ResourceStore, `svc-${i}`)),
          );
          exported = m;
          const pairs: [string, string][] = [];
          for (let i = 0; i < m; i++) for (const c of clusters) pairs.push([dnsIP(c), fqdn(`svc-${i}`)]);
          const conv = await within(stepLimit, `N=${n} M=${m}: convergence`, w.probe.call('all', { pairs, timeoutMs: stepLimit - 5000 }));
          row.convergeS = (performance.now() - t0) / 1000;
          row.convergeOk = `${conv['ok']}/${conv['total']}`;
          console.log(`   M=${m}: ${conv['ok']}/${conv['total']} (name, cluster) answers in ${row.convergeS.toFixed(1)} s`);
          if (memoryByKind(procsAt()).total.rss > CEILING || memAvailable() < FLOOR) {
            row.note = 'memory ceiling';
            notes.push(`N=${n} M=${m}: stopped at the memory ceiling`);
            break outer;
          }
          // 2. quiet: CPU at idle, memory
          await sleep(3000);
          const idle = await idleCpu(procsAt(), IDLE_S);
          row.idle = idle.total;
          const mem = memoryByKind(procsAt());
          row.pss = mem.total.pss;
          row.rss = mem.total.rss;
          const avg = (k: string): number => {
            const r = mem.kinds.find((x) => x.kind === k);
            return r ? r.pss / r.count : NaN;
          };
          row.supervisorPss = avg('world supervisor');
          row.mcPss = avg('multicluster');
          row.gwPss = avg('gateway');
          kindTables.set(n, { kinds: mem.kinds.map((k) => ({ ...k, cpu: idle.kinds.get(k.kind) ?? 0 })), m });
          // 3. DNS answers/s of the first cluster's server with the whole zone
          const flood = await within(
            60_000,
            'dns flood',
            w.probe.call('flood', {
              server: dnsIP(clusters[0] as WorldRec['clusters'][number]),
              names: Array.from({ length: m }, (_, i) => fqdn(`svc-${i}`)),
              durationMs: 3000,
              concurrency: 32,
            }),
          );
          row.qps = Number(flood['ok']) / (Number(flood['ms']) / 1000);
          // 4. export -> answer in every other cluster, one probe export at a time; the
          //    probe Services exist before (the world's own cost of a new Service, ClusterIP and
          //    service proxy, is not the export's), the clock starts at the ServiceExport
          const lat: number[] = [];
          const probeName = (s: number): string => `probe-${m}-${s}`;
          const fromOf = (s: number): WorldRec['clusters'][number] => clusters[s % n] as WorldRec['clusters'][number];
          await bounded(
            Array.from({ length: SAMPLES }, (_, s) => s),
            8,
            async (s) => {
              await createService(w.stores.get(fromOf(s).name) as ResourceStore, probeName(s));
            },
          );
          await sleep(2000);
          for (let s = 0; s < SAMPLES && left() > 60_000; s++) {
            const from = fromOf(s);
            const others = clusters.filter((c) => c !== from).map(dnsIP);
            const name = probeName(s);
            let t1 = 0;
            let write: Promise<unknown> = Promise.resolve();
            const done = w.probe.call('wait', { name: fqdn(name), servers: others, timeoutMs: 60_000 }, () => {
              t1 = epoch();
              write = createExport(w.stores.get(from.name) as ResourceStore, name);
            });
            const r = await within(70_000, 'probe export', done);
            await write;
            for (const at of r['at'] as (number | null)[]) lat.push(at === null ? Infinity : at - t1);
          }
          row.samples = lat.length;
          row.p50 = pct(lat, 0.5);
          row.p99 = pct(lat, 0.99);
          await bounded(
            Array.from({ length: SAMPLES }, (_, s) => s),
            8,
            (s) =>
              unexportService(w.stores.get((clusters[s % n] as WorldRec['clusters'][number]).name) as ResourceStore, `probe-${m}-${s}`).catch(() => undefined),
          );
          row.load = load();
          console.log(
            `   M=${m}: export->answer p50 ${f1(row.p50)} ms p99 ${f1(row.p99)} ms (${lat.length}); DNS ${row.qps.toFixed(0)} answers/s; idle CPU ${(row.idle * 100).toFixed(1)}%; PSS ${mib(row.pss)} MiB (load ${row.load})`,
          );
        } catch (err) {
          row.note = (err as Error).message.split('\n')[0];
          row.load = load();
          keepLogs = true;
          notes.push(`N=${n} M=${m}: ${row.note}`);
          console.log(`   M=${m}: ${row.note}`);
          if (err instanceof Timeout) break;
        }
      }
    } finally {
      running = undefined;
      await stop(w);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  report(boots, steps, kindTables, notes, Ns);
}

/** growth exponent between the first and the last point: y ~ x^k */
function slope(xs: number[], ys: number[]): number {
  const pts = xs.map((x, i) => [x, ys[i] as number] as const).filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(y));
  if (pts.length < 2) return NaN;
  const [a, b] = [pts[0]!, pts[pts.length - 1]!];
  return Math.log(b[1] / a[1]) / Math.log(b[0] / a[0]);
}

const growth = (k: number): string =>
  !Number.isFinite(k)
    ? 'not measured'
    : k < 0.3
      ? `flat (x^${k.toFixed(2)})`
      : k < 1.3
        ? `about linear (x^${k.toFixed(2)})`
        : `faster than linear (x^${k.toFixed(2)})`;

/** issue 29's goals at N = 16, from the rows of this run (not measured when N = 16 or M = 1 000 was not run) */
function goals(boots: BootRow[], steps: StepRow[], full: StepRow[]): void {
  const N = 16;
  const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  const b = boots.find((x) => x.n === N);
  console.log(`\n== goals (issue 29) at N = ${N} ==`);
  if (!b) {
    console.log(`  not measured: run with --n ${N}`);
    return;
  }
  const [ok = NaN, ini = NaN] = (b.handshakes.split(' ')[0] ?? '').split('/').map(Number);
  const perCluster = (b.idle * 100) / N;
  console.log(`  ready < 10 s: ${met(b.readyMs < 10_000)} (${f1(b.readyMs / 1000)} s)`);
  console.log(`  handshakes initiated <= 1.2x completed: ${met(ini <= 1.2 * ok)} (${ini} initiated, ${ok} completed: ${(ini / ok).toFixed(2)}x)`);
  console.log(`  idle CPU <= 1 % of a core per cluster: ${met(perCluster <= 1)} (${perCluster.toFixed(2)} % per cluster right after ready)`);
  const at = steps.filter((x) => x.n === N && Number.isFinite(x.p99));
  const p99 = Math.max(...at.map((x) => x.p99));
  console.log(
    `  export -> answer p99 < 100 ms: ${at.length ? `${met(p99 < 100)} (worst p99 ${f1(p99)} ms over M = ${at.map((x) => x.m).join(', ')})` : 'not measured'}`,
  );
  const m1000 = steps.find((x) => x.n === N && x.m === 1000);
  console.log(
    `  1 000 exports answered in every cluster < 60 s: ${m1000 ? `${met(full.includes(m1000) && m1000.convergeS < 60)} (${f1(m1000.convergeS)} s, ${m1000.convergeOk})` : 'not measured: run with --m 1000'}`,
  );
}

function report(boots: BootRow[], steps: StepRow[], kinds: Map<number, { kinds: KindRow[]; m: number }>, notes: string[], Ns: number[]): void {
  const line = (cols: (string | number)[], w: number[]): string => cols.map((c, i) => String(c).padStart(w[i] ?? 10)).join(' ');
  console.log('\n== per N, right after ready (no exports) ==');
  const bw = [4, 9, 6, 9, 9, 13, 9, 17, 10, 13];
  console.log(line(['N', 'ready s', 'procs', 'RSS MiB', 'PSS MiB', 'PSS/cluster', 'tunnels', 'handshakes ok/ini', 'idle CPU%', 'load'], bw));
  for (const b of boots) {
    console.log(line([b.n, f1(b.readyMs / 1000), b.procs, mib(b.rss), mib(b.pss), mib(b.pss / b.n), b.tunnels, b.handshakes, f1(b.idle * 100), b.load], bw));
  }
  console.log('\n== per N and M ==');
  const sw = [4, 5, 11, 13, 9, 9, 8, 10, 9, 8, 9, 9, 8, 13];
  console.log(
    line(['N', 'M', 'converge s', 'answered', 'p50 ms', 'p99 ms', 'samples', 'DNS ans/s', 'idle CPU%', 'PSS MiB', 'world PSS', 'mc PSS', 'gw PSS', 'load'], sw),
  );
  for (const s of steps) {
    console.log(
      line(
        [
          s.n,
          s.m,
          f1(s.convergeS),
          s.convergeOk,
          f1(s.p50),
          f1(s.p99),
          s.samples,
          Number.isFinite(s.qps) ? s.qps.toFixed(0) : '-',
          f1(s.idle * 100),
          Number.isFinite(s.pss) ? mib(s.pss) : '-',
          Number.isFinite(s.supervisorPss) ? mib(s.supervisorPss) : '-',
          Number.isFinite(s.mcPss) ? mib(s.mcPss) : '-',
          Number.isFinite(s.gwPss) ? mib(s.gwPss) : '-',
          s.load,
        ],
        sw,
      ) + (s.note ? `  (${s.note})` : ''),
    );
  }
  console.log('\n== per process kind (PSS MiB per process; idle CPU % of a core, all processes of the kind), at the largest M of each N ==');
  const shown = Ns.filter((n) => kinds.has(n));
  const allKinds = [...new Set(shown.flatMap((n) => kinds.get(n)!.kinds.map((k) => k.kind)))];
  console.log(line(['kind', ...shown.map((n) => `N=${n} M=${kinds.get(n)!.m}`)], [18, ...shown.map(() => 24)]));
  for (const k of allKinds) {
    console.log(
      line(
        [
          k,
          ...shown.map((n) => {
            const r = kinds.get(n)!.kinds.find((x) => x.kind === k);
            return r ? `${r.count}x ${mib(r.pss / r.count)} MiB ${f1(r.cpu * 100)}%` : '-';
          }),
        ],
        [18, ...shown.map(() => 24)],
      ),
    );
  }
  // growth
  console.log('\n== growth (exponent k of cost ~ x^k between the smallest and the largest point) ==');
  const bn = boots.map((b) => b.n);
  console.log(
    `  with N (no exports): time to ready ${growth(
      slope(
        bn,
        boots.map((b) => b.readyMs),
      ),
    )}; PSS ${growth(
      slope(
        bn,
        boots.map((b) => b.pss),
      ),
    )}; ` +
      `idle CPU ${growth(
        slope(
          bn,
          boots.map((b) => b.idle),
        ),
      )}; tunnels ${growth(
        slope(
          bn,
          boots.map((b) => Number(b.tunnels.split('/')[0])),
        ),
      )}`,
  );
  const mMax = Math.max(...steps.map((s) => s.m));
  const atM = steps.filter((s) => s.m === mMax && Number.isFinite(s.p50));
  if (atM.length > 1) {
    console.log(
      `  with N (M=${mMax}): export->answer p50 ${growth(
        slope(
          atM.map((s) => s.n),
          atM.map((s) => s.p50),
        ),
      )}; convergence ${growth(
        slope(
          atM.map((s) => s.n),
          atM.map((s) => s.convergeS),
        ),
      )}; ` +
        `idle CPU ${growth(
          slope(
            atM.map((s) => s.n),
            atM.map((s) => s.idle),
          ),
        )}; world supervisor PSS ${growth(
          slope(
            atM.map((s) => s.n),
            atM.map((s) => s.supervisorPss),
          ),
        )}`,
    );
  }
  for (const n of [...new Set(steps.map((s) => s.n))]) {
    const r = steps.filter((s) => s.n === n && Number.isFinite(s.p50));
    if (r.length < 2) continue;
    console.log(
      `  with M (N=${n}): convergence ${growth(
        slope(
          r.map((s) => s.m),
          r.map((s) => s.convergeS),
        ),
      )}; export->answer p50 ${growth(
        slope(
          r.map((s) => s.m),
          r.map((s) => s.p50),
        ),
      )}; ` +
        `DNS answers/s ${growth(
          slope(
            r.map((s) => s.m),
            r.map((s) => s.qps),
          ),
        )}; idle CPU ${growth(
          slope(
            r.map((s) => s.m),
            r.map((s) => s.idle),
          ),
        )}; PSS ${growth(
          slope(
            r.map((s) => s.m),
            r.map((s) => s.pss),
          ),
        )}`,
    );
  }
  const maxN = Math.max(0, ...boots.map((b) => b.n));
  const full = steps.filter((s) => s.convergeOk !== '-' && s.convergeOk.split('/')[0] === s.convergeOk.split('/')[1]);
  console.log(
    `\nlimits: largest world booted N=${maxN}; largest step with every name answering: ${full.length ? full.map((s) => `N=${s.n} M=${s.m}`).pop() : 'none'}`,
  );
  goals(boots, steps, full);
  for (const n of notes) console.log(`  note: ${n}`);
  console.log(`machine: ${availableParallelism()} cores; load average at the end ${load()} (the world shares the machine; every figure includes that)`);
}

if (process.argv.includes('--probe')) await runProbe();
else await main();
