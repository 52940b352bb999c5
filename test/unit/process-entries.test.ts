// Every process entry (daemon/*/main.js, agents/*/main.js, and the world's daemon/world.js,
// daemon/pod-runtime.js and daemon/world-githost.js) answers --help and --version
// with exit 0, output on stdout and nothing on stderr, before it starts anything; and a
// server whose port is taken says so, naming the address, with no stack trace.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { listenServer } from '../../src/base/net/index.js';
import { isStraitError } from '../../src/base/errors/index.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

function entries(): string[] {
  const out: string[] = [];
  for (const area of ['daemon', 'agents']) {
    const dir = join(root, 'dist', area);
    for (const name of readdirSync(dir)) {
      const main = join(dir, name, 'main.js');
      if (existsSync(main)) out.push(`${area}/${name}/main.js`);
    }
  }
  // the world's own entries beside them (the supervisor, the pod runtime, the code-hosting server)
  for (const name of readdirSync(join(root, 'dist', 'daemon'))) {
    if (/^(world|pod-runtime|world-githost)\.js$/.test(name)) out.push(`daemon/${name}`);
  }
  return out.sort();
}

describe('process entries: --help and --version exit 0 cleanly', () => {
  const all = entries();
  test("the entries are found (8 or more, and the world's three)", () => {
    assert.ok(all.length >= 11, all.join(', '));
    for (const e of ['daemon/world.js', 'daemon/pod-runtime.js', 'daemon/world-githost.js']) assert.ok(all.includes(e), e);
  });
  for (const entry of all) {
    for (const flag of ['--help', '-h', '--version', '-V']) {
      test(`${entry} ${flag}`, () => {
        // no environment that could make an agent start: only PATH
        const r = spawnSync(process.execPath, [join(root, 'dist', entry), flag], {
          encoding: 'utf8',
          timeout: 20_000,
          env: { PATH: process.env['PATH'] ?? '' },
        });
        assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
        assert.equal(r.stderr, '');
        assert.ok(r.stdout.trim().length > 0, 'prints something');
        if (flag === '--version' || flag === '-V') assert.match(r.stdout, /\d+\.\d+\.\d+/);
        else assert.match(r.stdout, /usage/i);
      });
    }
  }
});

async function occupied(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('a taken port is STRAIT_ERR_PORT_IN_USE, naming the address', () => {
  test('listenServer rejects with the code, naming the address', async () => {
    const { server, port } = await occupied();
    try {
      await assert.rejects(listenServer(createServer(), { port, host: '127.0.0.1' }), (err: unknown) => {
        assert.ok(isStraitError(err, 'STRAIT_ERR_PORT_IN_USE'), String(err));
        assert.match((err as Error).message, new RegExp(`127\\.0\\.0\\.1:${port}\\b`));
        return true;
      });
      await assert.rejects(listenServer(createHttpServer(), { port, host: '127.0.0.1' }), (err: unknown) => isStraitError(err, 'STRAIT_ERR_PORT_IN_USE'));
      await assert.rejects(listenServer(createServer(), { port: 0, host: '203.0.113.1' }), (err: unknown) => isStraitError(err, 'STRAIT_ERR_LISTEN_FAILED'));
    } finally {
      server.close();
    }
  });

  for (const [name, args] of [
    [
      'strait githost serve --port N',
      (port: number, dir: string) => [join(root, 'bin', 'strait.js'), 'githost', 'serve', '--port', String(port), '--state-dir', dir],
    ],
    [
      'daemon/githost/main.js --port N',
      (port: number, dir: string) => [join(root, 'dist', 'daemon', 'githost', 'main.js'), '--port', String(port), '--state-dir', dir],
    ],
    [
      'daemon/control/main.js --listen',
      (port: number, dir: string) => [
        join(root, 'dist', 'daemon', 'control', 'main.js'),
        '--listen',
        `127.0.0.1:${port}`,
        '--insecure',
        '--state-dir',
        dir,
        '--store-dir',
        join(dir, 'store'),
        '--metrics-listen',
        '127.0.0.1:0',
      ],
    ],
  ] as const) {
    test(`${name} with the port taken exits 4 with one line`, async () => {
      const { server, port } = await occupied();
      const dir = mkdtempSync(join(tmpdir(), 'strait-port-'));
      try {
        const child = spawn(process.execPath, args(port, dir), { stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
          stderr += d;
        });
        const code = await new Promise<number | null>((r) => {
          const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
          child.on('exit', (c) => {
            clearTimeout(t);
            r(c);
          });
        });
        assert.equal(code, 4, stderr);
        assert.match(stderr, new RegExp(`^error STRAIT_ERR_PORT_IN_USE: cannot listen on 127\\.0\\.0\\.1:${port}: `));
        assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
      } finally {
        server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
