// Byte-exact relaying under backpressure (src/mesh/dataplane/proxy/splice.ts): plaintext upstreams read through
// onread into one reused buffer, so a chunk still referenced by a peer must never be
// overwritten. Megabytes in random chunk sizes go both ways through a client sidecar and
// a server sidecar, with a reader that keeps pausing; both ends must receive exactly what was
// sent (a mismatch names both lengths and the first differing offset: a truncation, a hole
// or a reordering tell apart). With the C addon the mTLS case also crosses the native record
// relay and the TLS tap (src/platform/native/tls-relay.ts): with the upload running, the client
// sidecar, busy writing it, usually stays on Node's TLS through its tap while the server
// sidecar hands off; with a short request first, the client sidecar hands off and writes the
// download to its slow reader from C.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SidecarProxy, type InboundMode, type OutboundTlsMode } from '../../src/mesh/dataplane/proxy/index.js';
import { tlsOffloadAvailable } from '../../src/platform/native/index.js';
import { identityOf, testCa } from './helpers.js';

const DOWN = randomBytes(6 << 20);
const UP = randomBytes(3 << 20);
const REQUEST = randomBytes(64);

/** What differs between the bytes received and the bytes sent: equal, or lengths and the first differing offset. */
function sameBytes(got: Buffer, want: Buffer, what: string): void {
  if (got.equals(want)) return;
  let i = 0;
  const n = Math.min(got.length, want.length);
  while (i < n && got[i] === want[i]) i++;
  const hex = (b: Buffer): string => b.subarray(i, i + 16).toString('hex');
  // where the bytes received at the first difference were sent (a reordered or repeated stretch), if anywhere
  const from = i < got.length ? want.indexOf(got.subarray(i, i + 32)) : -1;
  assert.fail(
    `${what}: received ${got.length} bytes, sent ${want.length}; first difference at offset ${i} ` +
      `(received ${hex(got)}, sent ${hex(want)}; the received bytes there were sent at offset ${from})`,
  );
}

/** Write `data` in random chunk sizes (1 B .. 96 KiB), respecting backpressure, then end. */
async function writeChunked(sock: Socket, data: Buffer): Promise<void> {
  let off = 0;
  while (off < data.length) {
    const n = Math.min(data.length - off, 1 + Math.floor(Math.random() ** 3 * 96 * 1024));
    const ok = sock.write(data.subarray(off, off + n));
    off += n;
    if (!ok) await new Promise((r) => sock.once('drain', r));
  }
  sock.end();
}

/** Read everything, pausing 40 ms after every ~512 KiB (the buffers of every hop fill up) so that every hop sees backpressure. */
function readSlowly(sock: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let since = 0;
    sock.on('data', (d: Buffer) => {
      parts.push(d);
      since += d.length;
      if (since > 512 * 1024) {
        since = 0;
        sock.pause();
        setTimeout(() => sock.resume(), 40);
      }
    });
    sock.on('end', () => resolve(Buffer.concat(parts)));
    sock.on('error', reject);
  });
}

describe('sidecar pair relays bytes exactly under backpressure', () => {
  const appGot: Promise<Buffer>[] = [];
  let appPort = 0;
  const app = createServer({ allowHalfOpen: true }, (s) => {
    appGot.push(readSlowly(s));
    void writeChunked(s, DOWN);
  });
  before(async () => {
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    appPort = (app.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => app.close(() => r())));

  /** `request`: the client sends a short request, reads the whole download, and only then ends */
  const cases: { name: string; inbound: InboundMode; outbound: OutboundTlsMode; request?: boolean }[] = [
    { name: 'mTLS (ISTIO_MUTUAL → STRICT)', inbound: 'STRICT', outbound: 'ISTIO_MUTUAL' },
    { name: 'mTLS, a request then the download (the client sidecar hands off)', inbound: 'STRICT', outbound: 'ISTIO_MUTUAL', request: true },
    { name: 'plaintext (DISABLE → PERMISSIVE)', inbound: 'PERMISSIVE', outbound: 'DISABLE' },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const serverCert = testCa().issueSync('mesh', 'echo');
      const server = new SidecarProxy({ identity: identityOf(serverCert), inbound: { defaultMode: c.inbound }, outbound: { default: { mode: 'DISABLE' } } });
      const sp = (await server.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: appPort } })).port;
      const client = new SidecarProxy({
        identity: identityOf(testCa().issueSync('mesh', 'client')),
        inbound: { defaultMode: 'PERMISSIVE' },
        outbound: { default: c.outbound === 'DISABLE' ? { mode: 'DISABLE' } : { mode: 'ISTIO_MUTUAL', sans: [serverCert.spiffeId] } },
      });
      const cp = (await client.listenOutbound({ host: '127.0.0.1', port: 0, destination: { host: '127.0.0.1', port: sp } })).port;
      try {
        const before = appGot.length;
        const up = c.request ? REQUEST : UP;
        const results = await Promise.all(
          [0, 1].map(async () => {
            const sock = connect({ host: '127.0.0.1', port: cp, allowHalfOpen: true });
            await new Promise((r) => sock.once('connect', r));
            const got = readSlowly(sock);
            if (!c.request) {
              await writeChunked(sock, up);
              return got;
            }
            sock.write(up);
            const all = await got;
            sock.end();
            return all;
          }),
        );
        for (const r of results) sameBytes(r, DOWN, 'the download arrives byte for byte');
        const ups = await Promise.all(appGot.slice(before));
        assert.equal(ups.length, 2);
        for (const u of ups) sameBytes(u, up, 'the upload arrives byte for byte');
        if (c.request && tlsOffloadAvailable()) {
          assert.equal(client.metrics.tlsRelay.handoffs, 2, 'the client sidecar handed both connections to the native relay');
          assert.equal(client.metrics.tlsRelay.ended, 2, 'both relays ended cleanly');
        }
      } finally {
        await client.close();
        await server.close();
      }
    });
  }
});
