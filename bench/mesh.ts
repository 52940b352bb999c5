// Mesh data-path benchmark: 1 KiB HTTP/1.1 keep-alive responses through
//   direct          client → app
//   strait          client → strait client sidecar → mTLS → strait server sidecar (STRICT) → app
//   haproxy         client → haproxy (tcp, ssl client cert) → mTLS → haproxy (tcp, ssl verify required) → app
//                   (two haproxy processes, one per side; Debian's haproxy, installed by scripts/setup-system.sh)
// measured in the same run, rounds interleaved (direct, strait, haproxy, direct, ...), medians of the rounds.
// Two phases per path and round, both a fixed number of requests:
//   throughput: closed loop, REQUESTS requests over CONC keep-alive connections → requests/s
//   latency:    open loop at RATE requests/s, LATENCY-REQUESTS requests → p50/p99, and what the proxies add over direct
//   connections: closed loop, CONNECTIONS requests each on a new connection over CONC at a time → connections/s
//               (the per-connection path: accept, sniff, handshake (resumed), the flow record)
// Usage: node dist/bench/mesh.js [--requests 20000] [--conc 16] [--rate 1000] [--latency-requests 3000]
//          [--connections 2000] [--rounds 5] [--only strait,haproxy]
// Experiments: STRAIT_BENCH_PROF=DIR (CPU profiles), STRAIT_BENCH_NODE_ARGS (more node flags for the sidecars),
// STRAIT_BENCH_B_SCRIPT / STRAIT_BENCH_B_ARGS (a second strait pair "strait-b", another build or other flags).
// The app and the proxies run as separate processes; the load generator is this process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpuMs } from './world-procs.js';
import { createServer, request } from 'node:http';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MeshCa } from '../src/mesh/control/index.js';
import { SIDECAR_NODE_FLAGS } from '../src/mesh/dataplane/proxy/index.js';
import { freeTcpPort } from '../test/helpers/free-port.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const BODY = Buffer.alloc(1024, 0x61);
const REQ = Buffer.from('GET / HTTP/1.1\r\nHost: bench\r\n\r\n');
const REQ_CLOSE = Buffer.from('GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n');

// --- child mode: the application ------------------------------------------------
if (process.argv[2] === '--serve-app') {
  const server = createServer({ keepAlive: true, keepAliveTimeout: 60_000 }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BODY.length });
    res.end(BODY);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port }) + '\n'));
} else {
  await main();
}

/** resident memory of processes, MiB (VmRSS) */
function rssMiB(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return kb / 1024;
}

/** The child's first JSON line; its other lines (--trace-gc, say) go to our stderr. */
function readyLine(child: ChildProcess, name = 'child'): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    let ready = false;
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (!ready && l.startsWith('{')) {
        ready = true;
        resolve(JSON.parse(l));
      } else {
        process.stderr.write(`[${name}] ${l}\n`);
      }
    });
    child.once('exit', (c) => reject(new Error(`child exited ${c} before it was ready`)));
  });
}

async function waitListening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((r) => {
      const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        res.resume();
        r(true);
      });
      req.on('error', () => r(false));
      req.end();
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing answers on ${port}`);
}

// --- the load generator: raw keep-alive sockets, no HTTP client in the way -----------
// Every response of the app has the same length (fixed headers, 1 KiB body), learnt from
// the first one; a connection then only counts bytes, so the generator costs little next
// to what it measures.

interface Conn {
  sock: Socket;
  got: number;
  t0: number;
  done: (() => void) | undefined;
}

async function responseLength(port: number): Promise<number> {
  const sock = netConnect({ host: '127.0.0.1', port });
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

async function openConns(port: number, n: number, respLen: number): Promise<Conn[]> {
  const conns: Conn[] = [];
  for (let i = 0; i < n; i++) {
    const sock = netConnect({ host: '127.0.0.1', port });
    sock.setNoDelay(true);
    const c: Conn = { sock, got: 0, t0: 0, done: undefined };
    sock.on('data', (d: Buffer) => {
      c.got += d.length;
      if (c.got >= respLen) {
        if (c.got > respLen) throw new Error(`response longer than ${respLen} bytes`);
        c.got = 0;
        const f = c.done;
        c.done = undefined;
        f?.();
      }
    });
    sock.on('error', (err) => {
      throw err;
    });
    conns.push(c);
    await send(c); // the handshakes happen here, outside the measured window
  }
  return conns;
}

function send(c: Conn): Promise<void> {
  return new Promise((resolve) => {
    c.done = resolve;
    c.sock.write(REQ);
  });
}

/** Closed loop: `total` requests over `conc` connections, as fast as they come back. */
async function throughput(port: number, respLen: number, conc: number, total: number): Promise<number> {
  const conns = await openConns(port, conc, respLen);
  let left = total;
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (c) => {
      while (left > 0) {
        left--;
        await send(c);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  for (const c of conns) c.sock.destroy();
  return total / secs;
}

/** One request on a new connection; resolves when the whole response came and the connection closed. */
function oneShot(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = netConnect({ host: '127.0.0.1', port });
    let got = 0;
    sock.on('data', (d: Buffer) => {
      got += d.length;
    });
    sock.on('error', reject);
    sock.on('close', () => (got > 0 ? resolve() : reject(new Error('connection closed without a response'))));
    sock.end(REQ_CLOSE);
  });
}

/** Closed loop: `total` requests, each on its own connection, `conc` at a time → connections/s. */
async function connectionRate(port: number, conc: number, total: number): Promise<number> {
  let left = total;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (left > 0) {
        left--;
        await oneShot(port);
      }
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

/** Open loop: `total` requests at `rate` per second over a pool of connections; latency of each. */
async function latency(port: number, respLen: number, rate: number, total: number): Promise<{ p50: number; p99: number; late: number }> {
  const pool = await openConns(port, 32, respLen);
  const idle = [...pool];
  const lat = new Float64Array(total);
  let sent = 0;
  let finished = 0;
  let late = 0; // requests that found no idle connection (the path fell behind the rate)
  const start = performance.now() + 5;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / rate <= now) {
        const i = sent++;
        const c = idle.pop() ?? (late++, undefined);
        const go = (conn: Conn): void => {
          const t0 = performance.now();
          conn.done = () => {
            lat[i] = performance.now() - t0;
            finished++;
            const next = waiting.shift();
            if (next) next(conn);
            else idle.push(conn);
            if (finished === total) resolve();
          };
          conn.sock.write(REQ);
        };
        if (c) go(c);
        else waiting.push(go);
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + (sent * 1000) / rate - performance.now()));
    };
    const waiting: ((c: Conn) => void)[] = [];
    tick();
  });
  for (const c of pool) c.sock.destroy();
  const sorted = Array.from(lat).sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
  return { p50: q(0.5), p99: q(0.99), late };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      requests: { type: 'string', default: '20000' },
      conc: { type: 'string', default: '16' },
      rate: { type: 'string', default: '1000' },
      'latency-requests': { type: 'string', default: '3000' },
      connections: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '5' },
      only: { type: 'string' },
    },
  });
  const rounds = Math.max(1, Math.min(15, Number(values.rounds)));
  const total = Math.max(1000, Math.min(500_000, Number(values.requests)));
  const latTotal = Math.max(100, Math.min(100_000, Number(values['latency-requests'])));
  const conc = Math.max(1, Math.min(256, Number(values.conc)));
  const rate = Math.max(10, Math.min(20_000, Number(values.rate)));
  const connTotal = Math.max(0, Math.min(100_000, Number(values.connections)));
  const dir = mkdtempSync(join(tmpdir(), 'strait-bench-mesh-'));
  const children: ChildProcess[] = [];
  const start = (cmd: string, args: string[]): ChildProcess => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } });
    children.push(c);
    return c;
  };
  try {
    const ca = MeshCa.create();
    const srv = ca.issueSync('mesh', 'echo');
    const cli = ca.issueSync('mesh', 'client');
    const appPort = (await readyLine(start(process.execPath, [fileURLToPath(import.meta.url), '--serve-app'])))['port'] as number;

    // strait pair
    const sidecar = join(root, 'dist', 'agents', 'sidecar', 'main.js');
    writeFileSync(
      join(dir, 'server.json'),
      JSON.stringify({
        identity: { certPem: srv.certPem, keyPem: srv.keyPem, rootPem: srv.rootPem },
        inbound: { defaultMode: 'STRICT' },
        outbound: { default: { mode: 'DISABLE' } },
      }),
    );
    // STRAIT_BENCH_PROF=DIR: CPU profiles of the two sidecars (node --cpu-prof), written when they stop
    const prof = process.env['STRAIT_BENCH_PROF'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['STRAIT_BENCH_PROF']] : [];
    // STRAIT_BENCH_NODE_ARGS="--trace-gc ...": more node flags for the two sidecars (experiments)
    prof.push(...(process.env['STRAIT_BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean));
    writeFileSync(
      join(dir, 'client.json'),
      JSON.stringify({
        identity: { certPem: cli.certPem, keyPem: cli.keyPem, rootPem: cli.rootPem },
        inbound: { defaultMode: 'PERMISSIVE' },
        outbound: { default: { mode: 'ISTIO_MUTUAL', sans: [srv.spiffeId] } },
      }),
    );
    const straitPair = async (label: string, script: string, nodeArgs: string[]): Promise<{ port: number; pids: number[] }> => {
      const server = start(process.execPath, [
        ...nodeArgs,
        script,
        '--config',
        join(dir, 'server.json'),
        '--bind',
        '127.0.0.1',
        '--inbound-port',
        '0',
        '--outbound-port',
        '0',
        '--admin',
        '127.0.0.1:0',
        '--app',
        `127.0.0.1:${appPort}`,
      ]);
      const s = await readyLine(server, `${label} server sidecar`);
      const client = start(process.execPath, [
        ...nodeArgs,
        script,
        '--config',
        join(dir, 'client.json'),
        '--bind',
        '127.0.0.1',
        '--inbound-port',
        '0',
        '--outbound-port',
        '0',
        '--admin',
        '127.0.0.1:0',
        '--outbound-destination',
        `127.0.0.1:${s['inbound']}`,
      ]);
      const c = await readyLine(client, `${label} client sidecar`);
      return { port: c['outbound'] as number, pids: [server.pid as number, client.pid as number] };
    };
    const a = await straitPair('strait', sidecar, [...SIDECAR_NODE_FLAGS, ...prof]);
    const pids: Record<string, number[]> = { direct: [], strait: a.pids };
    const straitPort = a.port;
    // A/B experiments in one run: STRAIT_BENCH_B_SCRIPT (another build's dist/agents/sidecar/main.js)
    // and/or STRAIT_BENCH_B_ARGS (node flags instead of the default ones) make a second pair, "strait-b"
    let bPort: number | undefined;
    if (process.env['STRAIT_BENCH_B_SCRIPT'] || process.env['STRAIT_BENCH_B_ARGS'] !== undefined) {
      const b = await straitPair('strait-b', process.env['STRAIT_BENCH_B_SCRIPT'] ?? sidecar, [
        ...(process.env['STRAIT_BENCH_B_ARGS'] ?? SIDECAR_NODE_FLAGS.join(' ')).split(' ').filter(Boolean),
        ...prof,
      ]);
      pids['strait-b'] = b.pids;
      bPort = b.port;
    }

    // haproxy pair (the peer), if installed
    let haproxyPort: number | undefined;
    if (spawnSync('haproxy', ['-v']).status === 0) {
      writeFileSync(join(dir, 'srv.pem'), srv.certPem + srv.keyPem);
      writeFileSync(join(dir, 'cli.pem'), cli.certPem + cli.keyPem);
      writeFileSync(join(dir, 'root.pem'), ca.rootPem);
      const hs = await freeTcpPort();
      const hc = await freeTcpPort();
      // two processes, one per side, as two pods would run them
      const head = 'global\n  maxconn 4096\n  nbthread 1\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n';
      writeFileSync(
        join(dir, 'haproxy-server.cfg'),
        `${head}frontend server_side
  bind 127.0.0.1:${hs} ssl crt ${join(dir, 'srv.pem')} ca-file ${join(dir, 'root.pem')} verify required
  default_backend app
backend app
  server app 127.0.0.1:${appPort}
`,
      );
      writeFileSync(
        join(dir, 'haproxy-client.cfg'),
        `${head}frontend client_side
  bind 127.0.0.1:${hc}
  default_backend mesh
backend mesh
  server s 127.0.0.1:${hs} ssl crt ${join(dir, 'cli.pem')} ca-file ${join(dir, 'root.pem')} verify required
`,
      );
      pids['haproxy'] = [
        start('haproxy', ['-f', join(dir, 'haproxy-server.cfg'), '-db']).pid as number,
        start('haproxy', ['-f', join(dir, 'haproxy-client.cfg'), '-db']).pid as number,
      ];
      haproxyPort = hc;
    }
    await waitListening(appPort);
    await waitListening(straitPort);
    if (bPort) await waitListening(bPort);
    if (haproxyPort) await waitListening(haproxyPort);

    const all: [string, number][] = [
      ['direct', appPort],
      ['strait', straitPort],
      ...(bPort ? [['strait-b', bPort] as [string, number]] : []),
      ...(haproxyPort ? [['haproxy', haproxyPort] as [string, number]] : []),
    ];
    const paths = all.filter(([name]) => !values.only || name === 'direct' || values.only.split(',').includes(name.replace(/-b$/, '')));
    const respLen = await responseLength(appPort);
    const load = () =>
      loadavg()
        .map((x) => x.toFixed(2))
        .join(' ');
    console.log(
      `mesh bench: ${total} requests of ${respLen} bytes (1 KiB body) per throughput run over ${conc} keep-alive connections; ` +
        `${latTotal} requests at ${rate} req/s per latency run; ${connTotal} new connections per connection run; ${rounds} rounds interleaved (${paths.map(([n]) => n).join(', ')}, ...); load average ${load()}`,
    );
    // rounds interleave the paths so that load from elsewhere on the machine hits all of them alike; medians are reported
    const runs: Record<string, { rps: number[]; p50: number[]; p99: number[]; late: number[]; cpu: number[]; cps: number[]; cpuConn: number[] }> = {};
    for (let round = 0; round < rounds; round++) {
      const line: string[] = [];
      for (const [name, port] of paths) {
        const cpu0 = cpuMs(pids[name] ?? []);
        if (process.env['STRAIT_BENCH_NODE_ARGS']) process.stderr.write(`[bench] ${name} throughput phase begins\n`);
        const rps = await throughput(port, respLen, conc, total);
        if (process.env['STRAIT_BENCH_NODE_ARGS']) process.stderr.write(`[bench] ${name} throughput phase ends\n`);
        // CPU the two proxies spent per request: what the machine's load does not change much
        const cpuUs = ((cpuMs(pids[name] ?? []) - cpu0) * 1000) / total;
        if (process.env['STRAIT_BENCH_NODE_ARGS']) process.stderr.write(`[bench] ${name} latency phase begins\n`);
        const l = await latency(port, respLen, rate, latTotal);
        if (process.env['STRAIT_BENCH_NODE_ARGS']) process.stderr.write(`[bench] ${name} latency phase ends\n`);
        const cpuC0 = cpuMs(pids[name] ?? []);
        const cps = connTotal > 0 ? await connectionRate(port, conc, connTotal) : 0;
        // CPU the two proxies spent per new connection (handshake included): steadier than conn/s on a loaded machine
        const cpuConn = connTotal > 0 ? ((cpuMs(pids[name] ?? []) - cpuC0) * 1000) / connTotal : 0;
        const r = (runs[name] ??= { rps: [], p50: [], p99: [], late: [], cpu: [], cps: [], cpuConn: [] });
        r.rps.push(rps);
        r.p50.push(l.p50);
        r.p99.push(l.p99);
        r.late.push(l.late);
        r.cpu.push(cpuUs);
        r.cps.push(cps);
        r.cpuConn.push(cpuConn);
        line.push(
          `${name} ${rps.toFixed(0)} req/s${name === 'direct' ? '' : ` ${cpuUs.toFixed(1)} µs cpu/req`} p50 ${l.p50.toFixed(3)} p99 ${l.p99.toFixed(3)}${connTotal > 0 ? ` ${cps.toFixed(0)} conn/s${name === 'direct' ? '' : ` ${cpuConn.toFixed(0)} µs cpu/conn`}` : ''}`,
        );
      }
      console.log(`round ${round + 1}: ${line.join(' | ')}   (load ${load()})`);
    }
    const med = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const m = Math.floor(s.length / 2);
      return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
    };
    const results: Record<string, { rps: number; p50: number; p99: number; cpu: number; cps: number; cpuConn: number }> = {};
    console.log('');
    for (const [name] of paths) {
      const r = runs[name]!;
      results[name] = { rps: med(r.rps), p50: med(r.p50), p99: med(r.p99), cpu: med(r.cpu), cps: med(r.cps), cpuConn: med(r.cpuConn) };
      console.log(
        `${name.padEnd(8)} ${results[name].rps.toFixed(0).padStart(7)} req/s (conc ${conc})${name === 'direct' ? '' : `, proxies' CPU ${results[name].cpu.toFixed(1)} µs/req`}   at ${rate} req/s: p50 ${results[name].p50.toFixed(3)} ms  p99 ${results[name].p99.toFixed(3)} ms${connTotal > 0 ? `   new connections: ${results[name].cps.toFixed(0)}/s${name === 'direct' ? '' : `, proxies' CPU ${results[name].cpuConn.toFixed(0)} µs/conn`}` : ''}   (median of ${rounds} rounds)${name === 'direct' ? '' : `; RSS of the two ${rssMiB(pids[name] ?? []).toFixed(0)} MiB`}`,
      );
    }
    const d = results['direct']!;
    console.log('');
    const added = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : `${x.toFixed(3)} (noise: below direct)`);
    // the noise floor: what the machine alone (load generator, app, scheduler) does to the tail
    console.log(
      `direct   alone: p50 ${d.p50.toFixed(3)} ms, p99 ${d.p99.toFixed(3)} ms at ${rate} req/s (per round p99: ${runs['direct']!.p99.map((x) => x.toFixed(2)).join(' ')}) — the noise floor under the figures below`,
    );
    for (const name of ['strait', 'strait-b', 'haproxy']) {
      const r = results[name];
      if (!r) continue;
      console.log(
        `${name.padEnd(8)} added latency over direct: p50 ${added(r.p50 - d.p50)} ms, p99 ${added(r.p99 - d.p99)} ms (p99 ${r.p99.toFixed(3)} vs direct's ${d.p99.toFixed(3)}); throughput ${((r.rps / d.rps) * 100).toFixed(1)}% of direct`,
      );
    }
    const r = results['strait'];
    const h = results['haproxy'];
    const rb = results['strait-b'];
    if (r && rb) {
      console.log(
        `strait-b/strait: proxy CPU per request ${(rb.cpu / r.cpu).toFixed(2)}x (per round: ${runs['strait-b']!.cpu.map((x, i) => (x / runs['strait']!.cpu[i]!).toFixed(2)).join(' ')}); requests/s ${(rb.rps / r.rps).toFixed(2)}x (per round: ${runs['strait-b']!.rps.map((x, i) => (x / runs['strait']!.rps[i]!).toFixed(2)).join(' ')})`,
      );
      if (connTotal > 0) {
        console.log(
          `strait-b/strait: new connections/s ${(rb.cps / r.cps).toFixed(2)}x (per round: ${runs['strait-b']!.cps.map((x, i) => (x / runs['strait']!.cps[i]!).toFixed(2)).join(' ')}); ` +
            `proxy CPU per new connection ${(rb.cpuConn / r.cpuConn).toFixed(2)}x (per round: ${runs['strait-b']!.cpuConn.map((x, i) => (x / runs['strait']!.cpuConn[i]!).toFixed(2)).join(' ')})`,
        );
      }
    }
    if (r && h) {
      console.log(
        `strait/haproxy: proxy CPU per request ${(r.cpu / h.cpu).toFixed(2)}x (per round: ${runs['strait']!.cpu.map((x, i) => (x / runs['haproxy']!.cpu[i]!).toFixed(2)).join(' ')})`,
      );
      console.log(
        `strait/haproxy: requests/s ${(r.rps / h.rps).toFixed(2)}x (per round: ${runs['strait']!.rps.map((x, i) => (x / runs['haproxy']!.rps[i]!).toFixed(2)).join(' ')}); ` +
          `p50 ${(r.p50 / h.p50).toFixed(2)}x; p99 ${(r.p99 / h.p99).toFixed(2)}x`,
      );
      const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
      const pairRss = rssMiB(pids['strait'] ?? []);
      console.log(
        `goals (issue 29): keep-alive requests/s >= 1.2x haproxy's: ${met(r.rps >= 1.2 * h.rps)} (${(r.rps / h.rps).toFixed(2)}x); ` +
          `added p99 < 0.5 ms at ${rate} req/s: ${met(r.p99 - d.p99 < 0.5)} (+${(r.p99 - d.p99).toFixed(3)} ms); ` +
          (connTotal > 0
            ? `new connections/s >= haproxy's: ${met(r.cps >= h.cps)} (${(r.cps / h.cps).toFixed(2)}x); proxy CPU per new connection <= haproxy's: ${met(r.cpuConn <= h.cpuConn)} (${(r.cpuConn / h.cpuConn).toFixed(2)}x); `
            : '') +
          `a proxy pair <= 60 MiB RSS: ${met(pairRss <= 60)} (${pairRss.toFixed(0)} MiB)   (load average ${load()})`,
      );
    } else if (!h && !values.only) {
      console.log('haproxy is not installed (scripts/setup-system.sh installs it); no peer figures');
    }
  } finally {
    for (const ch of children) ch.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
