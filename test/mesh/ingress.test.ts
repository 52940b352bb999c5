// The ingress gateway on a loopback port: external plaintext curl → gateway → (mTLS or
// plaintext per the route) → server sidecar in each mode → app. The traffic table's ingress column (docs/mesh.md).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { IngressGateway, startRelay, type InboundMode, type OutboundTlsMode } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, identityOf, startLoopbackMesh, testCa, type LoopbackMesh } from './helpers.js';

// the TLS the gateway uses follows the DestinationRules of the table's setups (docs/mesh.md):
// PERMISSIVE (no rule, auto mTLS off) → plaintext; DISABLE (rule DISABLE) → plaintext; STRICT (rule ISTIO_MUTUAL) → mTLS
const table: { mode: InboundMode; tls: OutboundTlsMode; expect: string }[] = [
  { mode: 'PERMISSIVE', tls: 'DISABLE', expect: '200' },
  { mode: 'PERMISSIVE', tls: 'ISTIO_MUTUAL', expect: '200' },
  { mode: 'DISABLE', tls: 'DISABLE', expect: '200' },
  { mode: 'STRICT', tls: 'ISTIO_MUTUAL', expect: '200' },
  { mode: 'STRICT', tls: 'DISABLE', expect: '503' },
];

for (const row of table) {
  describe(`ingress gateway → ${row.mode} service with ${row.tls}`, () => {
    let m: LoopbackMesh;
    let gw: IngressGateway;
    let port: number;
    before(async () => {
      m = await startLoopbackMesh(row.mode);
      const gwCert = testCa().issueSync('istio-system', 'istio-ingressgateway-service-account');
      gw = new IngressGateway({
        identity: identityOf(gwCert),
        routes: [
          { pathPrefix: '/', service: 'echo.mesh', backend: { host: '127.0.0.1', port: m.serverPort }, tls: { mode: row.tls, sans: [m.serverCert.spiffeId] } },
        ],
      });
      port = (await gw.listen('127.0.0.1', 0)).port;
    });
    after(async () => {
      await gw.close();
      await m.close();
    });

    test(`external curl gets HTTP ${row.expect}`, async () => {
      const r = await curl([`http://127.0.0.1:${port}/`]);
      assert.equal(r.exit, 0, r.stderr);
      assert.equal(r.code, row.expect, r.body);
      if (row.expect === '200' && row.tls === 'ISTIO_MUTUAL') assert.equal(m.server.metrics.accepted[row.mode].mtls, 1);
    });
  });
}

describe('ingress gateway checks the service identity and routes by prefix', () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('STRICT');
  });
  after(() => m.close());

  test('a wrong expected SPIFFE ID gives 503; updating the route at runtime fixes it', async () => {
    const gw = new IngressGateway({
      identity: identityOf(testCa().issueSync('istio-system', 'gw')),
      routes: [
        {
          pathPrefix: '/',
          backend: { host: '127.0.0.1', port: m.serverPort },
          tls: { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/someone-else'] },
        },
      ],
    });
    const port = (await gw.listen('127.0.0.1', 0)).port;
    try {
      assert.equal((await curl([`http://127.0.0.1:${port}/`])).code, '503');
      gw.update({
        ...gw.config,
        routes: [{ pathPrefix: '/echo', backend: { host: '127.0.0.1', port: m.serverPort }, tls: { mode: 'ISTIO_MUTUAL', sans: [m.serverCert.spiffeId] } }],
      });
      assert.equal((await curl([`http://127.0.0.1:${port}/echo/x`])).code, '200');
      assert.equal((await curl([`http://127.0.0.1:${port}/other`])).code, '404');
    } finally {
      await gw.close();
    }
  });
});

describe('the host reaches an ingress on a unix socket through a loopback relay', () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('STRICT');
  });
  after(() => m.close());

  test('curl 127.0.0.1:<relay> → unix socket → ingress → mTLS → STRICT service: HTTP 200', async () => {
    const gw = new IngressGateway({
      identity: identityOf(testCa().issueSync('istio-system', 'gw')),
      routes: [{ pathPrefix: '/', backend: { host: '127.0.0.1', port: m.serverPort }, tls: { mode: 'ISTIO_MUTUAL', sans: [m.serverCert.spiffeId] } }],
    });
    const sock = join(m.dir, 'ingress.sock');
    await gw.listenPath(sock);
    const relay = await startRelay({ host: '127.0.0.1', port: 0 }, sock);
    try {
      const r = await curl([`http://127.0.0.1:${relay.address?.port}/`]);
      assert.equal(r.code, '200', r.stderr);
      assert.equal(relay.connections, 1);
      assert.equal(gw.metrics.mtlsRequests, 1);
    } finally {
      await relay.close();
      await gw.close();
    }
  });
});
