// Mesh data-path benchmark: 1 KiB HTTP/1.1 keep-alive responses through
//   direct          client → app
//   strait          client → strait client sidecar → mTLS → strait server sidecar (STRICT) → app
//   haproxy         client → haproxy (tcp, ssl client cert) → mTLS → haproxy (tcp, ssl verify required) → app
//                   (two haproxy processes, one per side; Debian's haproxy, installed by scripts/setup-system.sh)
// measured in the same run. Two phases per path, both bounded:
//   throughput: closed loop, CONC connections, DURATION seconds → requests/s
//   latency:    open loop at RATE requests/s for DURATION seconds → p50/p99, and what the proxies add over direct
// Usage: node dist/bench/mesh.js [--duration 2] [--conc 16] [--rate 1000] [--rounds 3]
// The app and the proxies run as separate processes; the load generator is this process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MeshCa } from '../src/control/mesh/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const BODY = Buffer.alloc(1024, 0x61);

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

function readyLine(child: ChildProcess): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (l) => resolve(JSON.parse(l)));
    child.once('exit', (c) => reject(new Error(`child exited ${c} before it was ready`)));
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

async function waitListening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((r) => {
      const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => { res.resume(); r(true); });
      req.on('error', () => r(false));
      req.end();
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing answers on ${port}`);
}

function get(agent: Agent, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

async function throughput(port: number, conc: number, seconds: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: conc });
  for (let i = 0; i < conc; i++) await get(agent, port); // warm connections (handshakes outside the window)
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (performance.now() < end) {
      await get(agent, port);
      done++;
    }
  }));
  agent.destroy();
  return done / seconds;
}

async function latency(port: number, rate: number, seconds: number): Promise<{ p50: number; p99: number; n: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  // open the whole pool first: handshakes are not part of the request latency
  await Promise.all(Array.from({ length: 64 }, () => get(agent, port)));
  const lat: number[] = [];
  const total = Math.floor(rate * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    pending.push(get(agent, port).then(() => { lat.push(performance.now() - t0); }));
  }
  await Promise.all(pending);
  agent.destroy();
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] as number;
  return { p50: q(0.5), p99: q(0.99), n: lat.length };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: {
    duration: { type: 'string', default: '2' }, conc: { type: 'string', default: '16' }, rate: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '3' } } });
  const rounds = Math.max(1, Math.min(9, Number(values.rounds)));
  const seconds = Math.min(30, Number(values.duration));
  const conc = Math.min(256, Number(values.conc));
  const rate = Math.min(20_000, Number(values.rate));
  const dir = mkdtempSync(join(tmpdir(), 'strait-bench-mesh-'));
  const children: ChildProcess[] = [];
  const start = (cmd: string, args: string[]): ChildProcess => {
    const c = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } });
    children.push(c);
    return c;
  };
  try {
    const ca = MeshCa.create();
    const srv = ca.issue('mesh', 'echo');
    const cli = ca.issue('mesh', 'client');
    const appPort = (await readyLine(start(process.execPath, [fileURLToPath(import.meta.url), '--serve-app'])))['port'] as number;

    // strait pair
    const sidecar = join(root, 'dist', 'agents', 'sidecar', 'main.js');
    writeFileSync(join(dir, 'server.json'), JSON.stringify({ identity: { certPem: srv.certPem, keyPem: srv.keyPem, rootPem: srv.rootPem }, inbound: { defaultMode: 'STRICT' }, outbound: { default: { mode: 'DISABLE' } } }));
    const s = await readyLine(start(process.execPath, [sidecar, '--config', join(dir, 'server.json'), '--bind', '127.0.0.1', '--inbound-port', '0', '--outbound-port', '0', '--admin', '127.0.0.1:0', '--app', `127.0.0.1:${appPort}`]));
    writeFileSync(join(dir, 'client.json'), JSON.stringify({ identity: { certPem: cli.certPem, keyPem: cli.keyPem, rootPem: cli.rootPem }, inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: { mode: 'ISTIO_MUTUAL', sans: [srv.spiffeId] } } }));
    const c = await readyLine(start(process.execPath, [sidecar, '--config', join(dir, 'client.json'), '--bind', '127.0.0.1', '--inbound-port', '0', '--outbound-port', '0', '--admin', '127.0.0.1:0', '--outbound-destination', `127.0.0.1:${s['inbound']}`]));
    const straitPort = c['outbound'] as number;

    // haproxy pair (the peer), if installed
    let haproxyPort: number | undefined;
    if (spawnSync('haproxy', ['-v']).status === 0) {
      writeFileSync(join(dir, 'srv.pem'), srv.certPem + srv.keyPem);
      writeFileSync(join(dir, 'cli.pem'), cli.certPem + cli.keyPem);
      writeFileSync(join(dir, 'root.pem'), ca.rootPem);
      const hs = await freePort();
      const hc = await freePort();
      // two processes, one per side, as two pods would run them
      const head = 'global\n  maxconn 4096\n  nbthread 1\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n';
      writeFileSync(join(dir, 'haproxy-server.cfg'), `${head}frontend server_side
  bind 127.0.0.1:${hs} ssl crt ${join(dir, 'srv.pem')} ca-file ${join(dir, 'root.pem')} verify required
  default_backend app
backend app
  server app 127.0.0.1:${appPort}
`);
      writeFileSync(join(dir, 'haproxy-client.cfg'), `${head}frontend client_side
  bind 127.0.0.1:${hc}
  default_backend mesh
backend mesh
  server s 127.0.0.1:${hs} ssl crt ${join(dir, 'cli.pem')} ca-file ${join(dir, 'root.pem')} verify required
`);
      start('haproxy', ['-f', join(dir, 'haproxy-server.cfg'), '-db']);
      start('haproxy', ['-f', join(dir, 'haproxy-client.cfg'), '-db']);
      haproxyPort = hc;
    }
    await waitListening(appPort);
    await waitListening(straitPort);
    if (haproxyPort) await waitListening(haproxyPort);

    const paths: [string, number][] = [['direct', appPort], ['strait', straitPort], ...(haproxyPort ? [['haproxy', haproxyPort] as [string, number]] : [])];
    // rounds interleave the paths so that load from elsewhere on the machine hits all of them alike; medians are reported
    const runs: Record<string, { rps: number[]; p50: number[]; p99: number[] }> = {};
    for (let round = 0; round < rounds; round++) {
      for (const [name, port] of paths) {
        const rps = await throughput(port, conc, seconds);
        const l = await latency(port, rate, seconds);
        const r = (runs[name] ??= { rps: [], p50: [], p99: [] });
        r.rps.push(rps); r.p50.push(l.p50); r.p99.push(l.p99);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const results: Record<string, { rps: number; p50: number; p99: number }> = {};
    for (const [name] of paths) {
      const r = runs[name]!;
      results[name] = { rps: med(r.rps), p50: med(r.p50), p99: med(r.p99) };
      console.log(`${name.padEnd(8)} ${results[name].rps.toFixed(0).padStart(7)} req/s (conc ${conc})   at ${rate} req/s: p50 ${results[name].p50.toFixed(3)} ms  p99 ${results[name].p99.toFixed(3)} ms   (median of ${rounds} rounds)`);
    }
    const d = results['direct']!;
    console.log('');
    const added = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : `${x.toFixed(3)} (noise: below direct)`);
    for (const name of ['strait', 'haproxy']) {
      const r = results[name];
      if (!r) continue;
      console.log(`${name.padEnd(8)} added latency over direct: p50 ${added(r.p50 - d.p50)} ms, p99 ${added(r.p99 - d.p99)} ms; throughput ${(r.rps / d.rps * 100).toFixed(1)}% of direct`);
    }
    if (results['haproxy']) {
      const r = results['strait']!;
      const h = results['haproxy'];
      console.log(`strait/haproxy: requests/s ${(r.rps / h.rps).toFixed(2)}x; p50 ${(r.p50 / h.p50).toFixed(2)}x; p99 ${(r.p99 / h.p99).toFixed(2)}x`);
    } else {
      console.log('haproxy is not installed (scripts/setup-system.sh installs it); no peer figures');
    }
  } finally {
    for (const ch of children) ch.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
