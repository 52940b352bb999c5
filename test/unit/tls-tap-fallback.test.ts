// A TlsTap (src/platform/native/tls-relay.ts) that falls back to passing bytes along while its
// record parser holds the start of a record (a fall-back outside its read handler: from a
// write of Node's TLS, or the owner's release()) passes that start on before the next bytes:
// the byte stream Node's TLS reads stays whole and in order.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { TlsTap } from '../../src/platform/native/index.js';

/** an application-data record header and `n` bytes of (opaque) body */
const record = (n: number): Buffer => Buffer.concat([Buffer.from([23, 3, 3, n >> 8, n & 0xff]), randomBytes(n)]);

test('a tap released with a partial record in its parser passes every byte on, in order', { timeout: 20_000 }, async () => {
  const r1 = record(100);
  const r2 = record(100);
  const r3 = record(300);
  const all = Buffer.concat([r1, r2, r3]);
  const cut = r1.length + 35; // the first write ends 30 bytes into r2's body
  const held: Socket[] = [];
  const server = createServer({ allowHalfOpen: true }, (s) => {
    held.push(s);
    s.write(all.subarray(0, cut));
    // the rest once the client has released its tap (it writes a byte then)
    s.once('data', () => s.end(all.subarray(cut)));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const raw = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, allowHalfOpen: true });
    const tap = new TlsTap(raw, 'client');
    const got: Buffer[] = [];
    let n = 0;
    let first: (() => void) | undefined;
    const firstRecord = new Promise<void>((r) => {
      first = r;
    });
    tap.on('data', (d: Buffer) => {
      got.push(d);
      n += d.length;
      if (n >= r1.length) first?.();
    });
    const ended = once(tap, 'end');
    await firstRecord;
    await new Promise((r) => setTimeout(r, 50)); // the start of r2 sits in the parser
    assert.equal(n, r1.length, 'only whole records are passed while the tap parses');
    tap.release();
    tap.end('x');
    await ended;
    const out = Buffer.concat(got);
    assert.equal(out.length, all.length, 'every byte is passed on');
    assert.ok(out.equals(all), 'in order');
    tap.destroy();
  } finally {
    for (const s of held) s.destroy();
    server.close();
  }
});
