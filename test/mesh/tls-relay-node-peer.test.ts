// The native TLS relay against Node's own TLS (OpenSSL) as the peer: a mesh client (Node's
// tls.connect) talks to a server sidecar whose records go native after the first request,
// and a client sidecar talks to a Node tls.Server. Every size that sits on a record
// boundary (0, 1, 16383, 16384, 16385, ...) must come back byte for byte, also when a
// forwarder cuts the stream into pieces of 1..7 bytes (records split across many reads).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { createServer as tlsCreateServer, type TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { SidecarProxy } from '../../src/mesh/dataplane/proxy/index.js';
import { identityOf, testCa } from './helpers.js';
import { meshClient, relayCounts, roundTrip, startEcho, startForwarder, startStrictServer, type Echo, type StrictServer } from './tls-relay-helpers.js';

const SIZES = [1, 0, 16383, 16384, 16385, 2 * 16384 + 5, 65536 + 7, 300_000];

describe('native TLS relay, server side, Node TLS client', { timeout: 120_000 }, () => {
  let echo: Echo;
  let srv: StrictServer;
  before(async () => {
    echo = await startEcho();
    srv = await startStrictServer(echo.port);
  });
  after(async () => {
    await srv.proxy.close();
    await echo.close();
  });

  for (const suite of ['TLS_AES_256_GCM_SHA384', 'TLS_AES_128_GCM_SHA256']) {
    test(`${suite}: sizes on record boundaries come back byte for byte after the hand-off`, async () => {
      const before = relayCounts();
      const c = await meshClient(srv.port, srv, { ciphers: suite });
      assert.equal(c.getCipher().standardName, suite);
      // the first request goes through Node's TLS and hands the connection to the relay
      assert.deepEqual(await roundTrip(c, Buffer.from('hello')), Buffer.from('hello'));
      for (const n of SIZES) {
        const data = randomBytes(n);
        assert.ok((await roundTrip(c, data)).equals(data), `${n} bytes`);
      }
      assert.equal(relayCounts().started - before.started, 1, 'the server sidecar handed the connection to the native relay');
      assert.ok(srv.proxy.metrics.tlsRelay.handoffs >= 1, 'the proxy counts its hand-offs (strait_mesh_tls_native_relay_total)');
      const closed = once(c, 'close');
      c.end();
      await closed;
      // a clean end: close_notify both ways, both directions ended
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(relayCounts().ended - before.ended, 1);
      assert.equal(relayCounts().failed - before.failed, 0);
    });
  }

  test('records split into pieces of 1..7 bytes across reads', async () => {
    const before = relayCounts();
    const fwd = await startForwarder(srv.port, 7);
    try {
      const c = await meshClient(fwd.port, srv);
      await roundTrip(c, Buffer.from('go'));
      for (const chop of [1, 3, 7]) {
        fwd.chop = chop;
        for (const n of [1, 16383, 16385]) {
          const data = randomBytes(n);
          assert.ok((await roundTrip(c, data)).equals(data), `${n} bytes in pieces of ${chop}`);
        }
      }
      assert.equal(relayCounts().started - before.started, 1);
      c.destroy();
    } finally {
      await fwd.close();
    }
  });

  test('half close: the client ends, the app still answers, then ends', async () => {
    const c = await meshClient(srv.port, srv);
    await roundTrip(c, Buffer.from('x'));
    const conn = echo.conns[echo.conns.length - 1]!;
    const got: Buffer[] = [];
    c.on('data', (d: Buffer) => got.push(d));
    c.write('last words');
    c.end();
    await once(c, 'end');
    assert.equal(Buffer.concat(got).toString(), 'last words');
    await conn.closed;
    assert.equal(Buffer.concat(conn.got).toString(), 'xlast words');
  });
});

describe('native TLS relay, client side, Node TLS server', { timeout: 120_000 }, () => {
  let tlsPort = 0;
  let server: ReturnType<typeof tlsCreateServer>;
  let client: SidecarProxy;
  let clientPort = 0;
  const accepted: TLSSocket[] = [];
  before(async () => {
    const ca = testCa();
    const serverCert = ca.issueSync('mesh', 'echo');
    server = tlsCreateServer({ cert: serverCert.certPem, key: serverCert.keyPem, ca: serverCert.rootPem, requestCert: true, rejectUnauthorized: true }, (s) => {
      accepted.push(s);
      s.on('data', (d: Buffer) => s.write(d));
      s.on('end', () => s.end());
      s.on('error', () => {});
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    tlsPort = (server.address() as AddressInfo).port;
    client = new SidecarProxy({
      identity: identityOf(ca.issueSync('mesh', 'client')),
      inbound: { defaultMode: 'PERMISSIVE' },
      outbound: { default: { mode: 'ISTIO_MUTUAL', sans: [serverCert.spiffeId] } },
    });
    clientPort = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port: tlsPort } })).port;
  });
  after(async () => {
    await client.close();
    for (const s of accepted) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  test('sizes on record boundaries come back byte for byte; tickets reach Node (resumption)', async () => {
    const before = relayCounts();
    for (let i = 0; i < 2; i++) {
      const app: Socket = netConnect({ host: '127.0.0.1', port: clientPort, allowHalfOpen: true });
      await once(app, 'connect');
      assert.deepEqual(await roundTrip(app, Buffer.from('hello')), Buffer.from('hello'));
      for (const n of SIZES) {
        const data = randomBytes(n);
        assert.ok((await roundTrip(app, data)).equals(data), `${n} bytes`);
      }
      const closed = once(app, 'close');
      app.end();
      await closed;
    }
    assert.equal(relayCounts().started - before.started, 2, 'both connections went native');
    assert.equal(client.metrics.handshakes.clientResumed, 1, 'the second connection resumed the session from a ticket Node read before the hand-off');
  });
});
