// Mesh (docs/mesh.md): workload certificates rotated before expiry without dropping connections
// (short lifetimes, the real CertRotator feeding two sidecars), and TLS session reuse
// between sidecars (a new connection resumes; a new configuration forces a full handshake).
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { CertRotator, type WorkloadCert } from '../../src/mesh/control/index.js';
import { SidecarProxy, type SidecarConfig } from '../../src/mesh/dataplane/proxy/index.js';
import { curl, identityOf, startEchoApp, startLoopbackMesh, testCa, type EchoApp, type LoopbackMesh } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('certificate rotation with a lifetime of seconds', () => {
  let app: EchoApp;
  let server: SidecarProxy;
  let client: SidecarProxy;
  const rotators: CertRotator[] = [];
  const serverCerts: WorkloadCert[] = [];
  const clientCerts: WorkloadCert[] = [];
  let clientPort = 0;
  const serverCfg = (c: WorkloadCert): SidecarConfig => ({
    identity: identityOf(c),
    inbound: { defaultMode: 'STRICT' },
    outbound: { default: { mode: 'DISABLE' } },
  });
  let serverPort = 0;
  let lifetimeMs = 6000;
  const clientCfg = (c: WorkloadCert): SidecarConfig => ({
    identity: identityOf(c),
    inbound: { defaultMode: 'PERMISSIVE' },
    outbound: { default: { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/echo'] } },
  });

  before(async () => {
    app = await startEchoApp();
    // Issuing takes a while on a loaded machine: scale the lifetime to what one issue costs
    // here (at least 6 s), and rotate when 3/4 of it remain, so that the test is about
    // rotating before expiry, not about the load.
    const t0 = performance.now();
    await testCa().issue('mesh', 'probe');
    const issueMs = performance.now() - t0;
    lifetimeMs = Math.round(Math.min(30_000, Math.max(6000, 12 * issueMs)));
    const graceRatio = 0.75;
    rotators.push(
      new CertRotator({
        ca: testCa(),
        namespace: 'mesh',
        serviceAccount: 'echo',
        issue: { lifetimeMs },
        graceRatio,
        onRotate: (c) => {
          serverCerts.push(c);
          server?.update(serverCfg(c));
        },
      }),
    );
    rotators.push(
      new CertRotator({
        ca: testCa(),
        namespace: 'mesh',
        serviceAccount: 'client',
        issue: { lifetimeMs },
        graceRatio,
        onRotate: (c) => {
          clientCerts.push(c);
          client?.update(clientCfg(c));
        },
      }),
    );
    server = new SidecarProxy(serverCfg(await (rotators[0] as CertRotator).start()));
    serverPort = (await server.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: app.port } })).port;
    client = new SidecarProxy(clientCfg(await (rotators[1] as CertRotator).start()));
    clientPort = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port: serverPort } })).port;
  });
  after(async () => {
    for (const r of rotators) r.stop();
    await client.close();
    await server.close();
    await app.close();
  });

  test("an open connection lives through rotations and past its certificates' expiry; new connections use the new ones", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: clientPort, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    assert.equal((await get()).status, 200);
    const firstExpiry = Math.max((serverCerts[0] as WorkloadCert).notAfter.getTime(), (clientCerts[0] as WorkloadCert).notAfter.getTime());
    let requests = 1;
    let fresh = 0;
    // keep using the connection (and opening new ones) until both first certificates have expired
    while (Date.now() < firstExpiry + 1000) {
      await sleep(250);
      const r = await get();
      assert.equal(r.status, 200);
      assert.equal(r.reused, true, `request ${requests + 1} went over the connection opened first`);
      requests++;
      // a longer limit than curl's usual 5 s: issuing blocks this process for seconds on a loaded machine
      const c = await curl(['--max-time', '20', `http://127.0.0.1:${clientPort}/`], 25_000);
      assert.equal(c.code, '200', `a new connection at ${new Date().toISOString()}: ${c.stderr}`);
      fresh++;
    }
    agent.destroy();
    assert.ok(serverCerts.length >= 2 && clientCerts.length >= 2, `rotated (server ${serverCerts.length}, client ${clientCerts.length} certificates)`);
    const second = serverCerts[1] as WorkloadCert;
    assert.ok(second.notBefore.getTime() < (serverCerts[0] as WorkloadCert).notAfter.getTime(), 'the new certificate came before the old one expired');
    assert.equal(server.metrics.handshakeFailures.server.expired + server.metrics.handshakeFailures.server.other, 0, 'no handshake failed');
    assert.equal(server.metrics.upstreamErrors.inbound + client.metrics.upstreamErrors.outbound, 0);
    assert.equal(server.metrics.handshakes.serverOk, fresh + 1, 'one handshake per connection: the kept one was never re-made');
    console.log(
      `# ${requests} requests over one connection across ${serverCerts.length - 1} server and ${clientCerts.length - 1} client rotations (${(lifetimeMs / 1000).toFixed(1)} s certificates), ${fresh} new connections, none failed`,
    );
  });
});

describe('TLS session reuse between sidecars', () => {
  let m: LoopbackMesh;
  before(async () => {
    m = await startLoopbackMesh('STRICT');
  });
  after(() => m.close());

  test('the next connection to the same destination resumes; a new configuration makes a full handshake', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await curl([`http://127.0.0.1:${m.clientPort}/`])).code, '200');
    assert.equal(m.client.metrics.handshakes.clientOk, 3);
    assert.ok(m.client.metrics.handshakes.clientResumed >= 1, `resumed ${m.client.metrics.handshakes.clientResumed} of 3`);
    assert.equal(m.server.metrics.handshakes.serverResumed, m.client.metrics.handshakes.clientResumed);
    const resumed = m.client.metrics.handshakes.clientResumed;
    m.client.update({ ...m.client.config });
    assert.equal((await curl([`http://127.0.0.1:${m.clientPort}/`])).code, '200');
    assert.equal(m.client.metrics.handshakes.clientResumed, resumed, 'sessions were dropped with the old configuration');
  });

  test('a resumed session still needs the expected server identity: a changed SAN list refuses the server', async () => {
    assert.equal((await curl([`http://127.0.0.1:${m.clientPort}/`])).code, '200');
    const cfg = m.client.config;
    const dest = Object.keys(cfg.outbound.destinations ?? {})[0] as string;
    m.client.update({
      ...cfg,
      outbound: { ...cfg.outbound, destinations: { [dest]: { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/other'] } } },
    });
    const r = await curl([`http://127.0.0.1:${m.clientPort}/`]);
    assert.notEqual(r.code, '200');
    assert.ok(m.client.metrics.handshakeFailures.client['bad-peer-identity'] >= 1);
  });
});
