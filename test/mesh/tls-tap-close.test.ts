// A TLS connection whose TCP socket closed cleanly (FIN received, our FIN sent) while records
// it received still wait in the TlsTap under Node's TLS (src/platform/native/tls-relay.ts), or
// their plaintext in the TLS socket, because the reader is slow: every byte must still be
// delivered, then the end. The reader here is paused until the TCP socket has closed, which
// is what a client that reads slowly does to a download that ends.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { connect as tlsConnect, createServer as tlsCreateServer, type TLSSocket } from 'node:tls';
import { test } from 'node:test';
import { TlsTap } from '../../src/platform/native/index.js';
import { testCa } from './helpers.js';

/** less than a stream's high-water mark: it all arrives, with the FIN, without the reader reading */
const SIZE = 12 * 1024;

async function downloadAfterClose(release: boolean): Promise<{ got: Buffer; sent: Buffer; ended: boolean; tapClosed: boolean }> {
  const cert = testCa().issueSync('mesh', 'server');
  const sent = randomBytes(SIZE);
  const server = tlsCreateServer({ cert: cert.certPem, key: cert.keyPem, minVersion: 'TLSv1.3' }, (s) => {
    s.on('error', () => {});
    // the download starts when the client says so (after it paused its reader), then ends
    s.once('data', () => s.end(sent));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const raw = netConnect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, allowHalfOpen: true });
    raw.on('error', () => {});
    const tap = new TlsTap(raw, 'client');
    const tls: TLSSocket = tlsConnect({ socket: tap, ca: cert.rootPem, checkServerIdentity: () => undefined });
    tap.watch(tls);
    tls.on('error', () => {});
    await once(tls, 'secureConnect');
    // 'pass': the owner gave the tap up (bytes passed along); else the tap still parses records
    if (release) tap.release();
    tls.pause();
    const closed = once(tls, 'close');
    const rawClosed = once(raw, 'close');
    tls.end('go');
    await rawClosed; // the server's data, close_notify and FIN arrived; our close_notify and FIN left
    await new Promise((r) => setImmediate(r));
    const parts: Buffer[] = [];
    let ended = false;
    tls.on('data', (d: Buffer) => parts.push(d));
    tls.on('end', () => {
      ended = true;
    });
    tls.resume();
    await closed;
    await new Promise((r) => setImmediate(r));
    return { got: Buffer.concat(parts), sent, ended, tapClosed: tap.destroyed };
  } finally {
    server.close();
  }
}

for (const release of [true, false]) {
  test(`a tap ${release ? 'given up by its owner' : 'still parsing records'} delivers what it holds after its TCP socket closed cleanly`, {
    timeout: 20_000,
  }, async () => {
    const r = await downloadAfterClose(release);
    assert.equal(r.got.length, r.sent.length, 'every byte received before the close is delivered');
    assert.ok(r.got.equals(r.sent), 'byte for byte');
    assert.ok(r.ended, 'then the end');
    assert.ok(r.tapClosed, 'the TLS socket, done, closed the tap under it');
  });
}
