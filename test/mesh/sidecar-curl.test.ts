// The mesh traffic outcomes table (docs/mesh.md), on loopback with the real curl:
// app ← server sidecar (mode under test) ← client sidecar (ISTIO_MUTUAL) ← curl.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SidecarProxy } from '../../src/mesh/dataplane/proxy/index.js';
import { after, before, describe, test } from 'node:test';
import type { InboundMode } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, serverConfig, startLoopbackMesh, testCa, writeClientCert, type LoopbackMesh } from './helpers.js';

const table: { mode: InboundMode; inMesh: string; plaintext: { exit: number; code: string } }[] = [
  { mode: 'PERMISSIVE', inMesh: '200', plaintext: { exit: 0, code: '200' } },
  { mode: 'DISABLE', inMesh: '200', plaintext: { exit: 0, code: '200' } },
  { mode: 'STRICT', inMesh: '200', plaintext: { exit: 56, code: '000' } },
];

for (const row of table) {
  describe(`inbound mode ${row.mode}`, () => {
    let m: LoopbackMesh;
    before(async () => {
      m = await startLoopbackMesh(row.mode);
      // the DISABLE row: the in-mesh client sends plaintext, as a DestinationRule DISABLE makes it
      if (row.mode === 'DISABLE') m.client.update({ ...m.client.config, outbound: { default: { mode: 'DISABLE' } } });
    });
    after(() => m.close());

    test(`in-mesh client (curl → client sidecar → server sidecar) gets HTTP ${row.inMesh}`, async () => {
      const r = await curl([`http://127.0.0.1:${m.clientPort}/`]);
      assert.equal(r.exit, 0, r.stderr);
      assert.equal(r.code, row.inMesh);
      assert.match(r.body, /hello from echo/);
      if (row.mode !== 'DISABLE') assert.equal(m.server.metrics.accepted[row.mode].mtls, 1);
    });

    test(`plaintext client outside the mesh: exit ${row.plaintext.exit}, HTTP ${row.plaintext.code}`, async () => {
      const before = m.app.requests;
      const r = await curl([`http://127.0.0.1:${m.serverPort}/`]);
      assert.equal(r.exit, row.plaintext.exit, r.stderr);
      assert.equal(r.code, row.plaintext.code);
      if (row.mode === 'STRICT') {
        assert.match(r.stderr, /Connection reset by peer/);
        assert.equal(m.app.requests, before, 'no byte reached the application');
        assert.equal(m.server.metrics.reset.STRICT.plaintext, 1);
      }
    });
  });
}

describe("STRICT refuses client certificates that are not the mesh CA's", () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('STRICT');
  });
  after(() => m.close());

  const refused = async (extra: string[]): Promise<void> => {
    const before = m.app.requests;
    const r = await curl(['-k', ...extra, `https://127.0.0.1:${m.serverPort}/`]);
    assert.notEqual(r.exit, 0, `curl must fail, got HTTP ${r.code}`);
    assert.equal(r.code, '000');
    assert.equal(m.app.requests, before, 'no request reached the application');
  };

  test('a certificate from a foreign CA', async () => {
    const foreign = (await import('../../src/mesh/control/index.js')).MeshCa.create({ trustDomain: 'cluster.local' });
    const files = writeClientCert(m.dir, 'foreign', foreign.issueSync('mesh', 'client'));
    await refused(['--cert', files.cert, '--key', files.key]);
    assert.ok(m.server.metrics.handshakeFailures.server.untrusted >= 1);
  });

  test('an expired certificate of the mesh CA', async () => {
    const expired = testCa().issueSync('mesh', 'client', { notBefore: new Date(Date.now() - 2 * 86400_000), lifetimeMs: 86400_000 });
    const files = writeClientCert(m.dir, 'expired', expired);
    await refused(['--cert', files.cert, '--key', files.key]);
    assert.ok(m.server.metrics.handshakeFailures.server.expired >= 1);
  });

  test('no client certificate at all', async () => {
    await refused([]);
    assert.ok(m.server.metrics.handshakeFailures.server['no-client-cert'] >= 1);
  });

  test('a valid mesh certificate through curl is accepted (control)', async () => {
    const files = writeClientCert(m.dir, 'good', testCa().issueSync('mesh', 'curl'));
    const r = await curl(['-k', '--cert', files.cert, '--key', files.key, `https://127.0.0.1:${m.serverPort}/`]);
    assert.equal(r.exit, 0, r.stderr);
    assert.equal(r.code, '200');
  });
});

describe('mode change at runtime, without a restart', () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('PERMISSIVE');
  });
  after(() => m.close());

  test('PERMISSIVE → STRICT → PERMISSIVE takes effect on the next connection', async () => {
    assert.equal((await curl([`http://127.0.0.1:${m.serverPort}/`])).code, '200');
    const t0 = performance.now();
    m.server.update(serverConfig(m.serverCert, 'STRICT'));
    const r = await curl([`http://127.0.0.1:${m.serverPort}/`]);
    const ms = performance.now() - t0;
    assert.equal(r.exit, 56, r.stderr);
    console.log(`# mode change observed by the next curl ${ms.toFixed(1)} ms after update() (curl start included)`);
    m.server.update(serverConfig(m.serverCert, 'PERMISSIVE'));
    assert.equal((await curl([`http://127.0.0.1:${m.serverPort}/`])).code, '200');
  });

  test('a connection open across a certificate rotation and a mode change keeps working', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: m.clientPort, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    // issued before the first request: on a loaded machine issuing can take longer than an idle keep-alive lives
    const rotated = testCa().issueSync('mesh', 'echo');
    const handshakes = m.client.metrics.handshakes.clientOk;
    assert.equal((await get()).status, 200);
    // rotate the server's certificate and make it STRICT while the connection is open
    m.server.update(serverConfig(rotated, 'STRICT'));
    const second = await get();
    assert.equal(second.status, 200);
    assert.equal(second.reused, true, 'the second request used the connection opened before the change');
    assert.equal(m.client.metrics.handshakes.clientOk, handshakes + 1, 'one mTLS handshake for both requests');
    agent.destroy();
    // a new connection gets the new certificate and still passes (in-mesh client under STRICT)
    const r = await curl([`http://127.0.0.1:${m.clientPort}/`]);
    assert.equal(r.code, '200', r.stderr);
  });
});

describe("PERMISSIVE passes the application's own TLS through (no istio ALPN), STRICT does not", () => {
  for (const mode of ['PERMISSIVE', 'STRICT'] as const) {
    test(`${mode}: curl https straight to a TLS application behind the sidecar`, async () => {
      const cert = testCa().issueSync('mesh', 'tls-app', { dnsNames: ['localhost'] });
      let served = 0;
      const app = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (_req, res) => {
        served++;
        res.end('tls app\n');
      });
      await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
      const p = new SidecarProxy(serverConfig(testCa().issueSync('mesh', 'echo'), mode));
      const port = (await p.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: (app.address() as AddressInfo).port } })).port;
      try {
        const r = await curl(['-k', `https://localhost:${port}/`]);
        if (mode === 'PERMISSIVE') {
          assert.equal(r.code, '200', r.stderr);
          assert.equal(p.metrics.accepted.PERMISSIVE['tls-passthrough'], 1);
          assert.equal(served, 1);
        } else {
          assert.notEqual(r.exit, 0);
          assert.equal(served, 0);
        }
      } finally {
        await p.close();
        app.closeAllConnections();
        await new Promise<void>((r) => app.close(() => r()));
      }
    });
  }
});
