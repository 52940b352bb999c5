// The native TLS relay against OpenSSL's own TLS (the openssl command) as the peer:
// s_client talks to a server sidecar, s_server to a client sidecar. After the hand-off the
// relay must stay in step with OpenSSL through a KeyUpdate the peer asks to be answered;
// what the relay does not take (ChaCha20, TLS 1.2, a KeyUpdate before the hand-off) stays
// on Node's TLS and still relays every byte.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SidecarProxy } from '../../src/mesh/dataplane/proxy/index.js';
import { freeTcpPort } from '../helpers/free-port.js';
import { identityOf, testCa, writeClientCert } from './helpers.js';
import { relayCounts, startEcho, startStrictServer, type Echo, type StrictServer } from './tls-relay-helpers.js';

/** A child's stdout, and a wait for text to appear in it. */
function watch(child: ChildProcessWithoutNullStreams): { out: () => string; until: (text: string, ms?: number) => Promise<void> } {
  let out = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer): void => {
    out += d.toString('latin1');
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const until = (text: string, ms = 10_000): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} from ${child.spawnargs.join(' ')} in ${ms} ms; it printed:\n${out}`)), ms);
      const check = (): void => {
        if (out.includes(text)) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  return { out: () => out, until };
}

describe('native TLS relay, server side, openssl s_client', { timeout: 120_000 }, () => {
  let echo: Echo;
  let srv: StrictServer;
  let dir: string;
  let files: { cert: string; key: string; root: string };
  before(async () => {
    echo = await startEcho();
    srv = await startStrictServer(echo.port);
    dir = mkdtempSync(join(tmpdir(), 'strait-tls-relay-'));
    const c = writeClientCert(dir, 'client', srv.clientCert);
    files = { ...c, root: join(dir, 'root.pem') };
    writeFileSync(files.root, srv.clientCert.rootPem);
  });
  after(async () => {
    await srv.proxy.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sClient = (extra: string[]): ChildProcessWithoutNullStreams =>
    spawn('openssl', [
      's_client',
      '-connect',
      `127.0.0.1:${srv.port}`,
      '-cert',
      files.cert,
      '-key',
      files.key,
      '-CAfile',
      files.root,
      '-alpn',
      'istio',
      '-no_ign_eof',
      ...extra,
    ]);

  test('a KeyUpdate after the hand-off: the relay updates its read key and answers; bytes keep flowing', async () => {
    const before = relayCounts();
    const p = sClient(['-tls1_3']);
    const w = watch(p);
    try {
      await w.until('Verify return code');
      p.stdin.write('first-line\n');
      await w.until('first-line\n'); // the echo (s_client does not print what it sends)
      p.stdin.write('second-line\n');
      await w.until('second-line\n');
      assert.equal(relayCounts().started - before.started, 1, 'handed to the native relay');
      p.stdin.write('K\n'); // s_client: KeyUpdate, update_requested
      await w.until('KEYUPDATE');
      p.stdin.write('after-update\n');
      await w.until('after-update\n');
      assert.equal(relayCounts().keyUpdates - before.keyUpdates, 1);
      p.stdin.end();
      await new Promise((r) => p.once('exit', r));
      assert.equal(relayCounts().failed - before.failed, 0, w.out());
    } finally {
      p.kill();
    }
  });

  for (const [name, extra] of [
    ['TLS_CHACHA20_POLY1305_SHA256', ['-tls1_3', '-ciphersuites', 'TLS_CHACHA20_POLY1305_SHA256']],
    ['TLS 1.2', ['-tls1_2']],
    ['a KeyUpdate before any application data', ['-tls1_3']],
  ] as const) {
    test(`${name}: stays on Node's TLS, bytes still flow`, async () => {
      const before = relayCounts();
      const p = sClient([...extra]);
      const w = watch(p);
      try {
        await w.until('Verify return code');
        if (name.startsWith('a KeyUpdate')) {
          p.stdin.write('K\n');
          await w.until('KEYUPDATE');
        }
        for (const line of ['one', 'two', 'three']) {
          p.stdin.write(`${line}-x\n`);
          await w.until(`${line}-x\n`);
        }
        assert.equal(relayCounts().started - before.started, 0, 'not handed to the native relay');
        assert.ok(relayCounts().fallbacks > before.fallbacks);
      } finally {
        p.kill();
      }
    });
  }
});

describe('native TLS relay, client side, openssl s_server', { timeout: 120_000 }, () => {
  test('AES-128 and AES-256: lines both ways before and after the hand-off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-tls-relay-'));
    const ca = testCa();
    const serverCert = ca.issueSync('mesh', 'echo');
    const s = writeClientCert(dir, 'server', serverCert);
    writeFileSync(join(dir, 'root.pem'), serverCert.rootPem);
    for (const suite of ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384']) {
      const port = await freeTcpPort();
      const p = spawn('openssl', [
        's_server',
        '-accept',
        `127.0.0.1:${port}`,
        '-cert',
        s.cert,
        '-key',
        s.key,
        '-CAfile',
        join(dir, 'root.pem'),
        '-Verify',
        '1',
        '-tls1_3',
        '-ciphersuites',
        suite,
        '-quiet',
      ]);
      const w = watch(p);
      const client = new SidecarProxy({
        identity: identityOf(ca.issueSync('mesh', 'client')),
        inbound: { defaultMode: 'PERMISSIVE' },
        outbound: { default: { mode: 'ISTIO_MUTUAL', sans: [serverCert.spiffeId] } },
      });
      let app: Socket | undefined;
      try {
        await new Promise((r) => setTimeout(r, 300)); // s_server binds
        const cp = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port } })).port;
        const before = relayCounts();
        app = netConnect({ host: '127.0.0.1', port: cp });
        let got = '';
        app.on('data', (d: Buffer) => {
          got += d.toString();
        });
        const gotLine = async (line: string): Promise<void> => {
          for (let i = 0; i < 200 && !got.includes(line); i++) await new Promise((r) => setTimeout(r, 25));
          assert.ok(got.includes(line), `${suite}: the app got ${JSON.stringify(got)}`);
        };
        for (let i = 1; i <= 3; i++) {
          app.write(`to-server-${i}\n`);
          await w.until(`to-server-${i}\n`);
          p.stdin.write(`to-app-${i}\n`);
          await gotLine(`to-app-${i}\n`);
        }
        assert.equal(relayCounts().started - before.started, 1, `${suite}: the client sidecar handed the connection to the relay`);
      } finally {
        app?.destroy();
        p.kill();
        await client.close();
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
});
