// The sidecar as its own process (agents/sidecar/main.js): configuration pushed over its
// admin API and through its config file reaches it without a restart; we measure how long
// until the next connection is enforced with the new mode. Metrics pass promtool.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import type { InboundMode } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, serverConfig, startEchoApp, testCa, type EchoApp } from './helpers.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
let app: EchoApp;
let child: ChildProcess;
let ports: { inbound: number; outbound: number; admin: number };
let dir: string;
const cert = testCa().issueSync('mesh', 'echo');
const cfgFile = () => join(dir, 'sidecar.json');

before(async () => {
  app = await startEchoApp();
  dir = mkdtempSync(join(tmpdir(), 'strait-sidecar-'));
  writeFileSync(cfgFile(), JSON.stringify(serverConfig(cert, 'PERMISSIVE')));
  child = spawn(
    process.execPath,
    [
      join(root, 'dist', 'agents', 'sidecar', 'main.js'),
      '--config',
      cfgFile(),
      '--bind',
      '127.0.0.1',
      '--inbound-port',
      '0',
      '--outbound-port',
      '0',
      '--admin',
      '127.0.0.1:0',
      '--app',
      `127.0.0.1:${app.port}`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`sidecar exited ${c}`)));
  });
  ports = JSON.parse(line);
});
after(async () => {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await app.close();
});

/** One plaintext request on a raw socket: 'reset' or 'ok'. Cheaper than a curl run, so it times the change well. */
function probe(): Promise<'reset' | 'ok'> {
  return new Promise((resolve) => {
    const s = connect(ports.inbound, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    s.once('data', () => {
      s.destroy();
      resolve('ok');
    });
    s.once('error', () => resolve('reset'));
    s.once('close', () => resolve('reset'));
  });
}

async function until(mode: InboundMode, t0: number): Promise<number> {
  const want = mode === 'STRICT' ? 'reset' : 'ok';
  for (let i = 0; i < 2000; i++) {
    if ((await probe()) === want) {
      const ms = performance.now() - t0;
      // and the real client agrees
      assert.equal((await curl([`http://127.0.0.1:${ports.inbound}/`])).exit, mode === 'STRICT' ? 56 : 0);
      return ms;
    }
  }
  throw new Error(`mode ${mode} never took effect`);
}

test('PUT /config switches PERMISSIVE → STRICT without a restart', async () => {
  assert.equal((await curl([`http://127.0.0.1:${ports.inbound}/`])).code, '200');
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${ports.admin}/config`, { method: 'PUT', body: JSON.stringify(serverConfig(cert, 'STRICT')) });
  assert.equal(res.status, 200);
  const ms = await until('STRICT', t0);
  console.log(`# admin API: STRICT enforced ${ms.toFixed(1)} ms after the PUT began (first refused probe connection)`);
  assert.equal(child.exitCode, null, 'same process, no restart');
});

test('a changed config file is picked up (back to PERMISSIVE)', async () => {
  const t0 = performance.now();
  writeFileSync(cfgFile(), JSON.stringify(serverConfig(cert, 'PERMISSIVE')));
  const ms = await until('PERMISSIVE', t0);
  console.log(`# config file: PERMISSIVE enforced ${ms.toFixed(1)} ms after the write`);
});

test('an invalid configuration is refused with its code and the old one stays', async () => {
  const res = await fetch(`http://127.0.0.1:${ports.admin}/config`, {
    method: 'PUT',
    body: JSON.stringify({ inbound: { defaultMode: 'STRIKT' }, outbound: { default: { mode: 'DISABLE' } } }),
  });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { code: string }).code, 'STRAIT_ERR_MESH_CONFIG_INVALID');
  assert.equal((await curl([`http://127.0.0.1:${ports.inbound}/`])).code, '200');
});

test('GET /metrics passes promtool and counts resets and expiry', async () => {
  const text = await (await fetch(`http://127.0.0.1:${ports.admin}/metrics`)).text();
  assert.match(text, /strait_mesh_inbound_reset_total\{mode="STRICT",reason="plaintext"\} [1-9]/);
  const expiry = Number(/strait_mesh_certificate_expiry_seconds (\d+)/.exec(text)?.[1]);
  assert.ok(expiry > 23 * 3600 && expiry <= 24 * 3600 + 120, `expiry ${expiry}`);
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
