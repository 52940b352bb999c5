// Attacks on the sidecar proxy (docs/mesh.md): nothing unauthenticated reaches the application
// under STRICT, and the client side refuses servers that are not who the policy names.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MeshCa } from '../../src/mesh/control/index.js';
import { SidecarProxy } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, identityOf, serverConfig, startEchoApp, startLoopbackMesh, testCa, type EchoApp, type LoopbackMesh } from '../mesh/helpers.js';

/** Send raw bytes, resolve with what came back and how the connection ended. */
function raw(port: number, bytes: Buffer, waitMs = 2000): Promise<{ data: Buffer; reset: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let reset = false;
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('data', (d) => chunks.push(d));
    s.on('error', () => {
      reset = true;
    });
    const t = setTimeout(() => s.destroy(), waitMs);
    s.on('close', () => {
      clearTimeout(t);
      resolve({ data: Buffer.concat(chunks), reset });
    });
  });
}

describe('STRICT inbound', () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('STRICT');
  });
  after(() => m.close());

  test('a plaintext request with a large body is reset and never reaches the application', async () => {
    const r = await raw(m.serverPort, Buffer.concat([Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n'), Buffer.alloc(65536, 0x41)]));
    assert.equal(r.reset, true);
    assert.equal(r.data.length, 0);
    assert.equal(m.app.requests, 0);
  });

  test('bytes that look like a TLS record but are not a handshake fail and reach nothing', async () => {
    const r = await raw(m.serverPort, Buffer.from([0x16, 0x03, 0x01, 0x00, 0x10, 0x01, ...Buffer.from('GET / HTTP/1.1\r\n\r\n')]));
    assert.equal(r.data.includes(Buffer.from('HTTP/1.1 200')), false);
    assert.equal(m.app.requests, 0);
  });

  test('a single TLS-looking byte then silence is reset at the sniff timeout', async () => {
    const p = new SidecarProxy(serverConfig(m.serverCert, 'STRICT'));
    const port = (await p.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: m.app.port }, sniffTimeoutMs: 200 })).port;
    try {
      const r = await raw(port, Buffer.from([0x16]), 3000);
      assert.equal(r.reset, true);
      assert.equal(p.metrics.reset.STRICT['sniff-timeout'], 1);
    } finally {
      await p.close();
    }
  });
});

/**
 * The client sidecar resets the application's connection when its mTLS handshake fails. curl
 * reports 56 (reset while receiving) or, when the reset arrives before it has finished
 * connecting on a fast loopback, 7; both are a refusal.
 */
function assertRefused(exit: number, stderr: string): void {
  assert.ok(exit === 56 || exit === 7, `curl exit ${exit}: ${stderr}`);
}

describe('outbound refuses the wrong server', () => {
  let app: EchoApp;
  before(async () => {
    app = await startEchoApp();
  });
  after(() => app.close());

  const attempt = async (serverCert: ReturnType<MeshCa['issueSync']>): Promise<{ exit: number; stderr: string; client: SidecarProxy }> => {
    const server = new SidecarProxy(serverConfig(serverCert, 'PERMISSIVE'));
    const sp = (await server.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: app.port } })).port;
    const client = new SidecarProxy({
      identity: identityOf(testCa().issueSync('mesh', 'client')),
      inbound: { defaultMode: 'PERMISSIVE' },
      outbound: { default: { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/echo'] } },
    });
    const cp = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port: sp } })).port;
    const r = await curl([`http://127.0.0.1:${cp}/`]);
    await client.close();
    await server.close();
    return { exit: r.exit, stderr: r.stderr, client };
  };

  test('a mesh certificate of another service account (impersonation) is refused', async () => {
    const before = app.requests;
    const { exit, stderr, client } = await attempt(testCa().issueSync('mesh', 'evil'));
    assertRefused(exit, stderr);
    assert.equal(client.metrics.handshakeFailures.client['bad-peer-identity'], 1);
    assert.equal(app.requests, before);
  });

  test('a server certificate from a foreign CA is refused', async () => {
    const before = app.requests;
    const { exit, stderr, client } = await attempt(MeshCa.create().issueSync('mesh', 'echo'));
    assertRefused(exit, stderr);
    assert.equal(client.metrics.handshakeFailures.client.untrusted, 1);
    assert.equal(app.requests, before);
  });
});
