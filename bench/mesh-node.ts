// Mesh at node scale: many injected pods on one node, their proxies run two ways in the
// same run, and what each costs per meshed pod:
//   sidecar   a proxy process per pod (agents/sidecar, `ip netns exec` into the pod, uid 1337)
//   node      one node-level proxy for all pods (agents/mesh-node, listeners inside each pod)
// Both started by the real mesh agent (startMeshAgent: certificates per service account,
// configurations, redirect rules) from objects in an embedded store: every pod its own
// service account (its own SPIFFE identity and certificate), PeerAuthentication STRICT,
// DestinationRule ISTIO_MUTUAL, one Service selecting all pods (each pod's configuration
// lists every endpoint with its SPIFFE ID, as a 100-replica Deployment would).
// Traffic: one keep-alive connection per pod, pod i → pod i+1 (port 8080 of the pod's
// address), made inside pod i's namespace, so it goes through pod i's outbound proxy
// (mTLS origination) and pod i+1's inbound proxy (STRICT) to the echo application;
// open loop at --rate req/s for --seconds; 1 KiB responses.
// Measured per phase: PSS (and RSS) of the proxy processes (/proc/PID/smaps_rollup) after
// start and after the load, divided by the pods; CPU time of the proxy processes over the
// load window (/proc/PID/stat), as vCPU per 1,000 req/s; p50/p99 of the requests.
// Phases: node at the baseline's pod count, sidecar at the baseline's pod count, node at
// --pods. 100 sidecar processes need several GiB and minutes on the shared machine, so the
// sidecar baseline runs at --baseline-pods (default 25) and is scaled per pod (a sidecar's
// cost does not depend on how many others run; say so with the figures).
// Usage (root; everything lives in a private network and mount namespace):
//   node dist/bench/mesh-node.js [--pods 100] [--baseline-pods 25] [--rate 1000] [--seconds 10] [--only node|sidecar]
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpuMs } from './world-procs.js';
import { createServer } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MeshCa, NETNS_ANNOTATION, startMeshAgent, type MeshAgent, type MeshDataplane } from '../src/mesh/control/index.js';
import { connectInNetns, listenInNetns, openNetns } from '../src/platform/netns/index.js';
import { openEmbeddedStore, type KubeObject } from '../src/platform/store/index.js';
import { dr, pa, pod, smcp, smmr, svc } from '../test/mesh/fixtures.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const BODY = Buffer.alloc(1024, 0x61);
const REQ = Buffer.from('GET / HTTP/1.1\r\nHost: bench\r\n\r\n');
const APP_PORT = 8080;
const NODE = 'node-1';

/** the other meshes' published figures the summary prints beside ours (docs/mesh-node.md) */
const ENVOY_MB = 60;
const ENVOY_VCPU = 0.2;
const ZTUNNEL_MB = 12;
const LINKERD_MB = 26;

const podIP = (i: number): string => `10.81.${1 + Math.floor(i / 200)}.${(i % 200) + 2}`;
const podNs = (i: number): string => `p${i}`;

function sh(cmd: string, args: string[], input?: string): void {
  execFileSync(cmd, args, { input, stdio: ['pipe', 'ignore', 'inherit'] });
}

function buildPods(n: number): void {
  sh('mount', ['-t', 'tmpfs', 'strait-netns', '/run/netns']);
  const rootLines = ['link set lo up', 'link add br0 type bridge', 'addr add 10.81.0.1/16 dev br0', 'link set br0 up'];
  for (let i = 0; i < n; i++) {
    rootLines.push(`netns add ${podNs(i)}`);
    rootLines.push(`link add v${i} type veth peer name eth0 netns ${podNs(i)}`);
    rootLines.push(`link set v${i} master br0 up`);
  }
  sh('ip', ['-batch', '-'], rootLines.join('\n') + '\n');
  for (let i = 0; i < n; i++) sh('ip', ['-n', podNs(i), '-batch', '-'], `link set lo up\naddr add ${podIP(i)}/16 dev eth0\nlink set eth0 up\n`);
}

/**
 * kB of /proc/PID/smaps_rollup summed over pids: Pss, Rss, or Private (USS: Private_Clean +
 * Private_Dirty, what the process alone holds; PSS adds its share of pages it shares, such
 * as node's own code, which shrinks as more processes share them)
 */
function memKb(pids: number[], field: 'Pss' | 'Rss' | 'Private'): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const get = (f: string): number => Number(new RegExp(`^${f}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
      kb += field === 'Private' ? get('Private_Clean') + get('Private_Dirty') : get(field);
    } catch {
      /* gone */
    }
  }
  return kb;
}

interface Conn {
  sock: Socket;
  got: number;
  done: (() => void) | undefined;
  failed?: Error;
}

/** a keep-alive connection from inside pod `from` to pod `to`'s application port (redirected to from's proxy) */
function openConn(nsFd: number, to: number, respLen: number): Promise<Conn> {
  const sock = connectInNetns(nsFd, 0, { host: podIP(to), port: APP_PORT });
  sock.setNoDelay(true);
  const c: Conn = { sock, got: 0, done: undefined };
  sock.on('data', (d: Buffer) => {
    c.got += d.length;
    if (c.got >= respLen) {
      c.got -= respLen;
      const f = c.done;
      c.done = undefined;
      f?.();
    }
  });
  return new Promise((resolve, reject) => {
    sock.once('error', (err) => {
      c.failed = err;
      reject(err);
    });
    c.done = () => resolve(c);
    sock.write(REQ);
  });
}

/** the length of the app's response (fixed), learnt from one request through pod 0's proxy */
function responseLength(nsFd: number, to: number): Promise<number> {
  const sock = connectInNetns(nsFd, 0, { host: podIP(to), port: APP_PORT });
  let buf = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    sock.on('error', reject);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /content-length: *(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
      if (!m || !buf.subarray(0, 12).toString().includes(' 200')) {
        reject(new Error(`bad response: ${buf.subarray(0, end).toString()}`));
        return;
      }
      const total = end + 4 + Number(m[1]);
      if (buf.length >= total) {
        sock.destroy();
        resolve(total);
      }
    });
    sock.write(REQ);
  });
}

/** Open loop: `rate` requests/s for `seconds`, round-robin over the connections (a busy one queues). */
async function load(conns: Conn[], rate: number, seconds: number): Promise<{ sent: number; secs: number; p50: number; p99: number; late: number }> {
  const total = Math.round(rate * seconds);
  const lat = new Float64Array(total);
  const queue: number[][] = conns.map(() => []);
  const busy = new Uint8Array(conns.length);
  let sent = 0;
  let finished = 0;
  let late = 0;
  const t0 = performance.now() + 5;
  const go = (ci: number, i: number): void => {
    const c = conns[ci] as Conn;
    busy[ci] = 1;
    const start = performance.now();
    c.done = () => {
      lat[i] = performance.now() - start;
      finished++;
      const next = queue[ci]?.shift();
      if (next !== undefined) go(ci, next);
      else busy[ci] = 0;
    };
    c.sock.write(REQ);
  };
  await new Promise<void>((resolve, reject) => {
    for (const c of conns) c.sock.once('error', reject);
    const check = setInterval(() => {
      if (finished === total) {
        clearInterval(check);
        resolve();
      }
    }, 5);
    const tick = (): void => {
      const now = performance.now();
      while (sent < total && t0 + (sent * 1000) / rate <= now) {
        const i = sent++;
        const ci = i % conns.length;
        if (busy[ci]) {
          late++;
          queue[ci]?.push(i);
        } else go(ci, i);
      }
      if (sent < total) setTimeout(tick, Math.max(0, t0 + (sent * 1000) / rate - performance.now()));
    };
    tick();
    // bounded: a path that cannot keep up ends the phase after twice its time
    setTimeout(
      () => {
        clearInterval(check);
        resolve();
      },
      seconds * 2000 + 10_000,
    ).unref();
  });
  const secs = (performance.now() - t0) / 1000;
  const sorted = Array.from(lat.subarray(0, finished)).sort((a, b) => a - b);
  const q = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  return { sent: finished, secs, p50: q(0.5), p99: q(0.99), late };
}

/** a plaintext connection from outside the mesh (the tree's root) to a STRICT pod: reset? */
function plaintextReset(to: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = netConnect({ host: podIP(to), port: APP_PORT });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNRESET'));
    s.on('data', () => {
      s.destroy();
      resolve(false);
    });
    s.on('close', () => resolve(false));
    s.write(REQ);
    setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 10_000).unref();
  });
}

interface PhaseResult {
  dataplane: MeshDataplane;
  pods: number;
  processes: number;
  startSecs: number;
  pssIdleKb: number;
  pssLoadKb: number;
  rssLoadKb: number;
  ussLoadKb: number;
  cpuMs: number;
  sent: number;
  secs: number;
  p50: number;
  p99: number;
  late: number;
  strictReset: boolean;
  loadavg: string;
}

const load1 = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function phase(ca: MeshCa, dataplane: MeshDataplane, n: number, rate: number, seconds: number, nsFds: number[]): Promise<PhaseResult> {
  const dir = mkdtempSync(join(tmpdir(), `strait-bench-mesh-node-${dataplane}-`));
  const store = openEmbeddedStore({ dir: join(dir, 'store') });
  let agent: MeshAgent | undefined;
  try {
    const objs: KubeObject[] = [
      pa('bench', 'default', 'STRICT'),
      dr('bench', 'default', '*', 'ISTIO_MUTUAL'),
      svc('bench', 'bench', APP_PORT, { selector: { app: 'bench' } }),
    ];
    for (let i = 0; i < n; i++) {
      const p = pod('bench', `p${i}`, { labels: { app: 'bench' }, inject: 'annotation', ip: podIP(i), sa: `sa-${i}`, port: APP_PORT });
      objs.push({
        ...p,
        metadata: { ...p.metadata, annotations: { ...p.metadata.annotations, [NETNS_ANNOTATION]: podNs(i) } },
        spec: { ...(p.spec as Record<string, unknown>), nodeName: NODE },
      });
    }
    for (const o of objs) {
      const applied = await store.apply(o);
      if (o.status) await store.updateStatus({ ...applied, status: o.status });
    }
    const t0 = performance.now();
    agent = await startMeshAgent({
      store,
      ca,
      dir: join(dir, 'mesh'),
      dataplane,
      sidecarScript: join(root, 'dist', 'agents', 'sidecar', 'main.js'),
      nodeProxyScript: join(root, 'dist', 'agents', 'mesh-node', 'main.js'),
      bootstrap: [smcp('istio-system', { mtls: false, automtls: false, cp: false }), smmr('istio-system', ['bench'])],
    });
    const deadline = Date.now() + 60_000 + n * 5_000;
    for (;;) {
      const st = agent.supervisor.status();
      if (st.length === n && st.every((s) => s.ready)) break;
      if (Date.now() > deadline)
        throw new Error(`${dataplane}: ${st.filter((s) => s.ready).length} of ${n} pods ready after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const startSecs = (performance.now() - t0) / 1000;
    const pids = [...new Set(agent.supervisor.status().map((s) => s.pid as number))];
    await new Promise((r) => setTimeout(r, 1000));
    const pssIdleKb = memKb(pids, 'Pss');
    const respLen = await responseLength(nsFds[0] as number, 1 % n);
    // one connection per pod, pod i → pod i+1; the handshakes happen here, before the measured window
    const conns: Conn[] = [];
    for (let i = 0; i < n; i++) conns.push(await openConn(nsFds[i] as number, (i + 1) % n, respLen));
    const strictReset = await plaintextReset(0);
    const cpu0 = cpuMs(pids);
    const r = await load(conns, rate, seconds);
    const cpu = cpuMs(pids) - cpu0;
    const out: PhaseResult = {
      dataplane,
      pods: n,
      processes: pids.length,
      startSecs,
      pssIdleKb,
      pssLoadKb: memKb(pids, 'Pss'),
      rssLoadKb: memKb(pids, 'Rss'),
      ussLoadKb: memKb(pids, 'Private'),
      cpuMs: cpu,
      sent: r.sent,
      secs: r.secs,
      p50: r.p50,
      p99: r.p99,
      late: r.late,
      strictReset,
      loadavg: load1(),
    };
    for (const c of conns) c.sock.destroy();
    return out;
  } finally {
    await agent?.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(r: PhaseResult, rate: number): string {
  const mbPod = r.pssLoadKb / 1024 / r.pods;
  const vcpu = r.cpuMs / 1000 / r.secs;
  const achieved = r.sent / r.secs;
  const perK = (vcpu * 1000) / achieved;
  return (
    `${r.dataplane.padEnd(8)} ${String(r.pods).padStart(4)} ${String(r.processes).padStart(5)} ${r.startSecs.toFixed(1).padStart(7)} s ` +
    `${(r.pssIdleKb / 1024).toFixed(0).padStart(6)} MiB ${(r.pssLoadKb / 1024).toFixed(0).padStart(6)} MiB ${mbPod.toFixed(2).padStart(7)} MiB ` +
    `${(r.ussLoadKb / 1024 / r.pods).toFixed(2).padStart(6)} MiB ${(r.rssLoadKb / 1024).toFixed(0).padStart(6)} MiB ${achieved.toFixed(0).padStart(6)}/${rate} ${vcpu.toFixed(3).padStart(6)} ` +
    `${perK.toFixed(3).padStart(7)} ${(perK / 2).toFixed(3).padStart(7)}  ${r.p50.toFixed(2).padStart(6)} ${r.p99.toFixed(2).padStart(7)} ms ` +
    `${r.strictReset ? 'reset' : 'NOT reset'}   ${r.loadavg}`
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      pods: { type: 'string', default: '100' },
      'baseline-pods': { type: 'string', default: '25' },
      rate: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
      only: { type: 'string' },
    },
  });
  const pods = Math.max(2, Math.min(400, Number(values.pods)));
  const base = Math.max(2, Math.min(pods, Number(values['baseline-pods'])));
  const rate = Math.max(10, Math.min(20_000, Number(values.rate)));
  const seconds = Math.max(2, Math.min(120, Number(values.seconds)));
  const only = values.only;
  buildPods(pods);
  const nsFds = Array.from({ length: pods }, (_, i) => openNetns(podNs(i)));
  const app: ChildProcess = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve-app', String(pods)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((r) => createInterface({ input: app.stdout! }).once('line', r));
    const ca = MeshCa.create();
    console.log(
      `mesh node bench: ${rate} req/s for ${seconds} s over one keep-alive connection per pod (pod i → pod i+1 through both pods' proxies), ` +
        `1 KiB responses, PeerAuthentication STRICT + DestinationRule ISTIO_MUTUAL, a SPIFFE identity per pod; load average ${load1()}`,
    );
    const plan: [MeshDataplane, number][] = [
      ['node', base],
      ['sidecar', base],
      ['node', pods],
    ];
    const results: PhaseResult[] = [];
    for (const [dp, n] of plan) {
      if (only && only !== dp) continue;
      if (dp === 'node' && n === base && base === pods && results.some((r) => r.dataplane === 'node')) continue;
      process.stderr.write(`[bench] ${dp} with ${n} pods… (load ${load1()})\n`);
      results.push(await phase(ca, dp, n, rate, seconds, nsFds));
    }
    console.log('');
    console.log(
      'dataplane pods procs   start    PSS idle PSS load  PSS/pod  USS/pod     RSS    req/s/rate  vCPU  vCPU/1k  /1k/proxy  p50    p99       STRICT plaintext  load average',
    );
    for (const r of results) console.log(report(r, rate));
    console.log('');
    console.log(
      `published: Envoy sidecar ~${ENVOY_MB} MB and ${ENVOY_VCPU} vCPU per 1,000 req/s per proxy; Istio ambient ztunnel ~${ZTUNNEL_MB} MB per node; Linkerd ~${LINKERD_MB} MB per proxy`,
    );
    console.log(
      "vCPU/1k: CPU of all proxy processes per 1,000 req/s end to end (each request crosses two proxies: the client pod's and the server pod's); /1k/proxy: half of it, per proxy crossed, as Envoy's figure is",
    );
    const side = results.find((r) => r.dataplane === 'sidecar');
    const nodeBig = [...results].reverse().find((r) => r.dataplane === 'node');
    const nodeBase = results.find((r) => r.dataplane === 'node' && r.pods === (side?.pods ?? base));
    const mbPod = (r: PhaseResult): number => r.pssLoadKb / 1024 / r.pods;
    const perK = (r: PhaseResult): number => r.cpuMs / r.secs / (r.sent / r.secs);
    if (side) {
      const uss = side.ussLoadKb / 1024 / side.pods;
      console.log(
        `sidecar baseline at ${side.pods} pods${side.pods === pods ? '' : `, scaled to ${pods}`}: ${((mbPod(side) * pods) / 1024).toFixed(2)} GiB PSS (${mbPod(side).toFixed(1)} MiB per pod). ` +
          `Each sidecar is its own process: what it holds alone (USS ${uss.toFixed(1)} MiB) does not depend on the count; its share of the pages all share (node's code) ` +
          `shrinks as more run, so at ${pods} pods PSS per pod lies between ${uss.toFixed(1)} and ${mbPod(side).toFixed(1)} MiB`,
      );
    }
    if (nodeBig && nodeBase && nodeBig !== nodeBase) {
      console.log(
        `node proxy, each further pod: ${((nodeBig.pssLoadKb - nodeBase.pssLoadKb) / 1024 / (nodeBig.pods - nodeBase.pods)).toFixed(2)} MiB PSS (from ${nodeBase.pods} to ${nodeBig.pods} pods)`,
      );
    }
    if (side && nodeBase) {
      console.log(
        `node/sidecar at ${side.pods} pods: memory per pod ${(mbPod(nodeBase) / mbPod(side)).toFixed(3)}x, CPU per request ${(perK(nodeBase) / perK(side)).toFixed(2)}x`,
      );
    }
    if (nodeBig) {
      const mb = mbPod(nodeBig);
      const k = perK(nodeBig) / 2;
      console.log(
        `goals at ${nodeBig.pods} pods (node dataplane): memory per meshed pod ${mb.toFixed(2)} MiB ≤ 20 MB: ${mb * 1.048576 <= 20 ? 'met' : 'NOT met'}; ` +
          `CPU per 1,000 req/s per proxy ${k.toFixed(3)} vCPU < ${ENVOY_VCPU}: ${k < ENVOY_VCPU ? 'met' : 'NOT met'} (end to end, both proxies: ${perK(nodeBig).toFixed(3)} vCPU: ${perK(nodeBig) < ENVOY_VCPU ? 'below' : 'NOT below'} ${ENVOY_VCPU} too)`,
      );
    }
    console.log(`(load average at the end ${load1()})`);
  } finally {
    app.kill('SIGTERM');
  }
}

// entry: the app child, the re-exec into a private tree, or the bench inside it (last: every
// module-level constant above is initialized by then)
if (process.argv[2] === '--serve-app') {
  // the application of every pod, one process: an HTTP server on port 8080 inside each pod's namespace
  const n = Number(process.argv[3]);
  for (let i = 0; i < n; i++) {
    const server = createServer({ keepAlive: true }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BODY.length });
      res.end(BODY);
    });
    server.keepAliveTimeout = 120_000;
    server.listen({ fd: listenInNetns(podNs(i), '0.0.0.0', APP_PORT) });
  }
  process.stdout.write('{"ready":true}\n');
} else if (process.env['STRAIT_BENCH_INNER'] !== '1') {
  if (process.getuid?.() !== 0) {
    console.error('bench/mesh-node needs root (network namespaces, nftables)');
    process.exit(2);
  }
  const r = spawnSync(
    'unshare',
    [
      '--net',
      '--mount',
      '--propagation',
      'private',
      '--fork',
      '--kill-child',
      '--',
      process.execPath,
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit', env: { ...process.env, STRAIT_BENCH_INNER: '1', STRAIT_LOG_LEVEL: 'warn' } },
  );
  process.exit(r.status ?? 1);
} else {
  await main();
}
