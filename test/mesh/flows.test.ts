// The inbound flows a sidecar records (docs/mesh.md, Observed traffic), on loopback with the
// real curl: an in-mesh client (curl → client sidecar → mTLS) shows as mtls with its SPIFFE ID,
// a plaintext client (curl from its own loopback address) with that address; after STRICT the
// plaintext client is reset (curl exit 56) and recorded as such; the table stays bounded.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SidecarProxy, type FlowReportEntry } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, serverConfig, startEchoApp, startLoopbackMesh, testCa, type EchoApp, type LoopbackMesh } from './helpers.js';

const find = (flows: FlowReportEntry[], want: Partial<FlowReportEntry>): FlowReportEntry | undefined =>
  flows.find((f) => Object.entries(want).every(([k, v]) => f[k as keyof FlowReportEntry] === v));

describe('flows of a PERMISSIVE server, then STRICT', () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('PERMISSIVE');
  });
  after(() => m.close());

  test('an in-mesh client is recorded as mtls with its SPIFFE ID; a plaintext client with its address', async () => {
    const inMesh = await curl([`http://127.0.0.1:${m.clientPort}/`]);
    assert.equal(inMesh.code, '200', inMesh.stderr);
    const outsider = await curl(['--interface', '127.0.0.2', `http://127.0.0.1:${m.serverPort}/`]);
    assert.equal(outsider.code, '200', outsider.stderr);
    assert.match(outsider.body, /peer 127\.0\.0\.1:/, 'the app sees the sidecar, the sidecar sees the client');

    const report = m.server.flows.report();
    assert.ok(report);
    assert.equal(report.flows.length, 2, JSON.stringify(report.flows));
    const mtls = find(report.flows, { tls: 'mtls' });
    assert.deepEqual(mtls && { identity: mtls.identity, address: mtls.address, port: mtls.port, outcome: mtls.outcome, mode: mtls.mode, count: mtls.count }, {
      identity: 'spiffe://cluster.local/ns/mesh/sa/client',
      address: '127.0.0.1',
      port: m.app.port,
      outcome: 'accepted',
      mode: 'PERMISSIVE',
      count: 1,
    });
    const plain = find(report.flows, { tls: 'plaintext' });
    assert.deepEqual(plain && { identity: plain.identity, address: plain.address, outcome: plain.outcome, count: plain.count }, {
      identity: undefined,
      address: '127.0.0.2',
      outcome: 'accepted',
      count: 1,
    });
    assert.equal(m.server.flows.report(), undefined, 'nothing new: nothing to report');
  });

  test('a known flow again: one entry, the report carries the new connections only', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await curl(['--interface', '127.0.0.2', `http://127.0.0.1:${m.serverPort}/`])).code, '200');
    const report = m.server.flows.report();
    assert.deepEqual(
      report?.flows.map((f) => [f.address, f.tls, f.count]),
      [['127.0.0.2', 'plaintext', 3]],
    );
    assert.equal(find(m.server.flows.snapshot(), { address: '127.0.0.2', tls: 'plaintext' })?.count, 4);
  });

  test('TLS that offers no mesh ALPN passes through under PERMISSIVE (tls-passthrough)', async () => {
    await curl(['-k', '--interface', '127.0.0.3', `https://127.0.0.1:${m.serverPort}/`]); // the app speaks HTTP: curl fails, the sidecar let it through
    const f = find(m.server.flows.snapshot(), { address: '127.0.0.3' });
    assert.deepEqual(f && [f.tls, f.outcome], ['tls-passthrough', 'accepted']);
  });

  test('after STRICT the plaintext client is reset (exit 56) and recorded as reset/plaintext', async () => {
    m.server.update(serverConfig(m.serverCert, 'STRICT'));
    const before = m.app.requests;
    const r = await curl(['--interface', '127.0.0.2', `http://127.0.0.1:${m.serverPort}/`]);
    assert.equal(r.exit, 56, r.stderr);
    assert.equal(m.app.requests, before);
    const reset = find(m.server.flows.snapshot(), { address: '127.0.0.2', outcome: 'reset' });
    assert.deepEqual(reset && [reset.tls, reset.reason, reset.mode, reset.count], ['plaintext', 'plaintext', 'STRICT', 1]);
    const old = find(m.server.flows.snapshot(), { address: '127.0.0.2', outcome: 'accepted' });
    assert.equal(old?.mode, 'PERMISSIVE', 'the accepted flow stays, with the mode it was accepted under');
  });

  test('under STRICT a TLS client without a certificate is recorded as a failed handshake (tls, no-client-cert)', async () => {
    const r = await curl(['-k', '--interface', '127.0.0.4', `https://127.0.0.1:${m.serverPort}/`]);
    assert.notEqual(r.exit, 0);
    const f = find(m.server.flows.snapshot(), { address: '127.0.0.4' });
    assert.deepEqual(f && [f.tls, f.outcome, f.reason], ['tls', 'reset', 'no-client-cert']);
  });
});

describe('the flow table is bounded', () => {
  let app: EchoApp;
  let server: SidecarProxy;
  let port: number;
  before(async () => {
    app = await startEchoApp();
    server = new SidecarProxy(serverConfig(testCa().issueSync('mesh', 'echo'), 'PERMISSIVE'), { flowLimit: 3 });
    port = (await server.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: app.port } })).port;
  });
  after(async () => {
    await server.close();
    await app.close();
  });

  test('six clients into a table of 3: the three seen last are kept, three evicted and reported', async () => {
    for (let i = 10; i < 16; i++) {
      const r = await curl(['--interface', `127.0.0.${i}`, `http://127.0.0.1:${port}/`]);
      assert.equal(r.code, '200', r.stderr);
      await new Promise((res) => setTimeout(res, 5)); // distinct lastSeen milliseconds
    }
    assert.equal(server.flows.size, 3);
    assert.deepEqual(
      server.flows
        .snapshot()
        .map((f) => f.address)
        .sort(),
      ['127.0.0.13', '127.0.0.14', '127.0.0.15'],
    );
    assert.equal(server.flows.evictedTotal, 3);
    const report = server.flows.report();
    assert.equal(report?.evicted, 3);
    assert.equal(report?.limit, 3);
    assert.equal(report?.flows.length, 3);
  });

  test('a client seen again is touched, so the next new one evicts another', async () => {
    assert.equal((await curl(['--interface', '127.0.0.13', `http://127.0.0.1:${port}/`])).code, '200');
    await new Promise((res) => setTimeout(res, 5));
    assert.equal((await curl(['--interface', '127.0.0.20', `http://127.0.0.1:${port}/`])).code, '200');
    assert.deepEqual(
      server.flows
        .snapshot()
        .map((f) => f.address)
        .sort(),
      ['127.0.0.13', '127.0.0.15', '127.0.0.20'],
    );
  });
});
