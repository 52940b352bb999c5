// Benchmark of the code-hosting server (docs/githost.md, Benchmark), all on loopback, bounded:
//   1. token-authenticated GET /api/v1/users/{u}: requests/s and p50/p99 latency,
//      against a peer: a bare node:http server answering a static JSON of the same size;
//   2. push and clone of a 1,000-commit repository over HTTP (git http-backend),
//      against a peer: the same push and clone through git's local transport.
// Run: node scripts/build.mjs && node dist/bench/githost.js [--requests N] [--concurrency C]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GithostDb, createToken, createUser, githostPaths } from '../src/githost/server/index.js';

const root = join(fileURLToPath(import.meta.url), '..', '..', '..');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const REQUESTS = arg('--requests', 5000);
const CONCURRENCY = arg('--concurrency', 16);
const COMMITS = arg('--commits', 1000);

function startChild(args: string[], ready: RegExp): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ child, url: m[1] as string });
    });
    child.on('exit', (code) => reject(new Error(`child exited ${code}`)));
  });
}

async function load(url: string, path: string, headers: Record<string, string>): Promise<{ rps: number; p50: number; p99: number; bytes: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const u = new URL(url);
  const lat: number[] = [];
  let bytes = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const t = performance.now();
      const req = request({ host: u.hostname, port: u.port, path, headers, agent }, (res) => {
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          lat.push(performance.now() - t);
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  for (let i = 0; i < 200; i++) await one(); // warm up
  lat.length = 0;
  bytes = 0;
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next++;
        await one();
      }
    }),
  );
  const secs = (performance.now() - start) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] ?? 0;
  return { rps: lat.length / secs, p50: pct(0.5), p99: pct(0.99), bytes: bytes / lat.length };
}

function git(args: string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync('git', args, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return performance.now() - t;
}

/** A repository with `n` commits, made with git fast-import (each commit changes one file). */
function makeRepo(dir: string, n: number, env: NodeJS.ProcessEnv): void {
  spawnSync('git', ['init', '-q', '-b', 'main', dir], { env });
  let stream = '';
  for (let i = 1; i <= n; i++) {
    const content = `line ${i}\n${'x'.repeat(200)}\n`;
    const msg = `commit ${i}\n`;
    stream += `commit refs/heads/main\ncommitter Bench <admin@example.com> ${1700000000 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`;
    stream += `M 644 inline file${i % 50}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  const r = spawnSync('git', ['fast-import', '--quiet'], { cwd: dir, env, input: stream });
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`);
  spawnSync('git', ['reset', '-q', '--hard', 'main'], { cwd: dir, env });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-bench-githost-'));
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
  const children: ChildProcess[] = [];
  try {
    const paths = githostPaths(dir);
    mkdirSync(paths.root, { recursive: true });
    const db = new GithostDb(paths.db);
    const admin = await createUser(db, { username: 'bench', email: 'admin@example.com', password: 'bench-pass-1', admin: true });
    const token = createToken(db, admin.id, 'bench', ['all'])?.token as string;
    db.close();

    const gh = await startChild([join(root, 'dist', 'daemon', 'githost', 'main.js'), '--port', '0', '--state-dir', dir], /githost listening on (\S+)/);
    children.push(gh.child);
    const sample = await fetch(`${gh.url}/api/v1/users/bench`, { headers: { Authorization: `token ${token}` } }).then((r) => r.text());
    const peerSrc = `const b=${JSON.stringify(sample)};require('node:http').createServer((q,s)=>{s.writeHead(200,{'Content-Type':'application/json;charset=utf-8','Content-Length':Buffer.byteLength(b)});s.end(b)}).listen(0,'127.0.0.1',function(){console.log('peer listening on http://127.0.0.1:'+this.address().port)})`;
    const peerFile = join(dir, 'peer.cjs');
    writeFileSync(peerFile, peerSrc);
    const peer = await startChild([peerFile], /peer listening on (\S+)/);
    children.push(peer.child);

    console.log(`githost bench: ${REQUESTS} requests, concurrency ${CONCURRENCY}, loopback, server and peer in their own processes`);
    const headers = { Authorization: `token ${token}`, accept: 'application/json' };
    const a = await load(gh.url, '/api/v1/users/bench', headers);
    const p = await load(peer.url, '/api/v1/users/bench', headers);
    const f = (x: number) => x.toFixed(2);
    console.log(`GET /api/v1/users/{u} (token)  ${a.rps.toFixed(0).padStart(7)} req/s  p50 ${f(a.p50)} ms  p99 ${f(a.p99)} ms  (${a.bytes.toFixed(0)} B)`);
    console.log(`peer: static JSON node:http    ${p.rps.toFixed(0).padStart(7)} req/s  p50 ${f(p.p50)} ms  p99 ${f(p.p99)} ms  (${p.bytes.toFixed(0)} B)`);
    console.log(`ratio githost/peer: throughput ${(a.rps / p.rps).toFixed(2)}x, p99 ${(a.p99 / p.p99).toFixed(2)}x`);

    // push / clone of a 1,000-commit repository
    const work = join(dir, 'work');
    makeRepo(work, COMMITS, env);
    const created = await fetch(`${gh.url}/api/v1/user/repos`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'big' }),
    });
    if (created.status !== 201) throw new Error(`create repo: ${created.status}`);
    const remote = new URL('/bench/big.git', gh.url);
    remote.username = 'bench';
    remote.password = token;
    const pushMs = git(['push', '-q', remote.toString(), 'main'], work, env);
    const cloneMs = git(['clone', '-q', '--bare', remote.toString(), join(dir, 'clone.git')], dir, env);
    git(['init', '-q', '--bare', join(dir, 'peer.git')], dir, env);
    const peerPushMs = git(['push', '-q', `file://${join(dir, 'peer.git')}`, 'main'], work, env);
    const peerCloneMs = git(['clone', '-q', '--bare', '--no-local', join(dir, 'peer.git'), join(dir, 'peer-clone.git')], dir, env);
    console.log(`${COMMITS}-commit repository: push ${pushMs.toFixed(0)} ms, clone ${cloneMs.toFixed(0)} ms over HTTP (git http-backend, token auth)`);
    console.log(`peer (git local transport):   push ${peerPushMs.toFixed(0)} ms, clone ${peerCloneMs.toFixed(0)} ms`);
    console.log(`ratio githost/peer: push ${(pushMs / peerPushMs).toFixed(2)}x, clone ${(cloneMs / peerCloneMs).toFixed(2)}x`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
