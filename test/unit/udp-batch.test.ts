// Batched UDP (native/src/udp.c): datagrams sent in one event-loop turn leave as UDP GSO
// runs and come back through UDP GRO; each must arrive whole, in order, as its own datagram.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { UdpTransport } from '../../src/multicluster/dataplane/udp/index.js';

function datagram(i: number, len: number): Buffer {
  const b = Buffer.alloc(len, i & 255);
  b.writeUInt32BE(i, 0);
  return b;
}

test('udp batch: GSO runs of mixed sizes arrive as the same datagrams, in order', async () => {
  const got: Buffer[] = [];
  let done: () => void = () => undefined;
  const all = new Promise<void>((r) => (done = r));
  // sizes: runs of equal size, a shorter one that ends a run, one too big to batch, tiny ones
  const sizes: number[] = [];
  for (let i = 0; i < 300; i++) sizes.push(i % 97 === 50 ? 3000 : i % 13 === 7 ? 200 + i : i % 31 === 0 ? 4 : 1432);
  const rx = await UdpTransport.bind('127.0.0.1', 0, (msg) => {
    got.push(Buffer.from(msg));
    if (got.length === sizes.length) done();
  });
  const tx = await UdpTransport.bind('127.0.0.1', 0, () => undefined);
  try {
    assert.equal(tx.batched, true, 'the addon is built: the batched path must be in use');
    // in chunks per turn, so the receive buffer never overflows
    for (let off = 0; off < sizes.length; off += 100) {
      for (let i = off; i < Math.min(off + 100, sizes.length); i++) {
        const d = datagram(i, sizes[i] as number);
        if (i % 2 === 0) tx.send(d, rx.port, '127.0.0.1');
        else tx.send([d.subarray(0, 16), d.subarray(16)], rx.port, '127.0.0.1');
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await Promise.race([all, new Promise((r) => setTimeout(r, 3000))]);
    assert.equal(got.length, sizes.length);
    for (let i = 0; i < sizes.length; i++) assert.deepEqual(got[i], datagram(i, sizes[i] as number), `datagram ${i}`);
    assert.ok(tx.stats.batches < sizes.length / 4, `GSO batching used: ${tx.stats.batches} sends for ${sizes.length} datagrams`);
  } finally {
    await tx.close();
    await rx.close();
  }
});

test('udp batch: interoperates with plain node:dgram peers both ways', async () => {
  const plain = createSocket('udp4');
  await new Promise<void>((r) => plain.bind(0, '127.0.0.1', () => r()));
  const fromPlain: string[] = [];
  const t = await UdpTransport.bind('127.0.0.1', 0, (msg, addr, port) => fromPlain.push(`${msg.toString()} ${addr}:${port === plain.address().port}`));
  const toPlain: string[] = [];
  plain.on('message', (m) => toPlain.push(m.toString()));
  try {
    for (let i = 0; i < 5; i++) t.send(Buffer.from(`x${i}`.padEnd(100, '.')), plain.address().port, '127.0.0.1');
    plain.send('hello', t.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      toPlain,
      [0, 1, 2, 3, 4].map((i) => `x${i}`.padEnd(100, '.')),
    );
    assert.deepEqual(fromPlain, ['hello 127.0.0.1:true']);
  } finally {
    await t.close();
    plain.close();
  }
});
