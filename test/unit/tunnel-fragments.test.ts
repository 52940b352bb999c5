// Tunnel fragments (docs/tunnel-protocol.md): one AEAD per super-packet, carried in tunnel fragments (type 5,
// feature bit 2) that fit a 1500-byte path. Reordering, loss, duplicates, tampering,
// negotiation with peers that lack the feature, and the reassembly memory bound.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomBytes } from 'node:crypto';
import {
  FEATURE_FRAG,
  FEATURE_VNET,
  FRAG_HEADER,
  MAX_FRAGMENTED_BODY,
  NEXT_IPV4_VNET,
  TYPE_DATA,
  TYPE_FRAGMENT,
  fragment,
  fragmentPlan,
  writeFragmentHeader,
} from '../../src/multicluster/wire/tunnel/index.js';
import { Reassembler, FRAG_DUPLICATE, FRAG_INCONSISTENT, FRAG_PENDING } from '../../src/multicluster/dataplane/tunnel/index.js';
import { tunnelPair, type Pair } from '../helpers/tunnel-pair.js';

const BOTH = FEATURE_VNET | FEATURE_FRAG;

function connected(opts: Parameters<typeof tunnelPair>[0] = {}): Pair {
  const p = tunnelPair({ featuresA: BOTH, featuresB: BOTH, maxDatagram: 1472, ...opts });
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  assert.equal(p.a.peer('cluster-b')?.status, 'connected');
  return p;
}

/** A virtio_net_hdr + "super-packet" of `n` bytes (the tunnel does not parse it). */
function superPacket(n: number, fill = 0x5a): Buffer {
  const b = Buffer.alloc(n, fill);
  b.writeUInt32BE(n, 20);
  return b;
}

/** Send one super-packet from A and capture its datagrams instead of delivering them. */
function capture(p: Pair, payload: Buffer): Buffer[] {
  const start = p.wire.length;
  p.link.filter = (d) => d.from !== 'a';
  assert.ok(p.a.sendPacket(p.a.peer('cluster-b')!, payload, NEXT_IPV4_VNET));
  p.link.filter = undefined;
  return p.wire.slice(start).map((d) => d.bytes);
}

test('a 64 KB super-packet leaves as fragments that fit a 1500-byte path and arrives once, intact', () => {
  const p = connected();
  const payload = superPacket(65_000);
  const before = p.wire.length;
  p.a.sendPacket(p.a.peer('cluster-b')!, payload, NEXT_IPV4_VNET);
  const sent = p.wire.slice(before).filter((d) => d.from === 'a');
  const [count, size] = fragmentPlan(65_000 + 16, 1472);
  assert.equal(sent.length, count);
  assert.equal(size, 1452);
  for (const d of sent) {
    assert.equal(d.bytes[0], TYPE_FRAGMENT);
    assert.ok(d.bytes.length <= 1472, `datagram of ${d.bytes.length} bytes`);
  }
  // all fragments but the last have the same length (UDP GSO sends them in one call)
  assert.equal(new Set(sent.slice(0, -1).map((d) => d.bytes.length)).size, 1);
  assert.equal(p.deliveredB.length, 1);
  assert.ok(p.deliveredB[0]!.equals(payload));
  assert.equal(p.b.counters.reassembled, 1);
  assert.equal(p.a.counters.fragmentsSent, count);
  // a message that fits one datagram is still an ordinary data packet
  const small = capture(p, superPacket(1000));
  assert.equal(small.length, 1);
  assert.equal(small[0]![0], TYPE_DATA);
});

test('every split of the tag across fragments (regression: a tag straddling two fragments)', () => {
  const p = connected();
  // sealed body = payload + 16; fragments carry 1452 bytes: sweep the tag across a boundary
  for (let n = 2 * 1452 - 20; n <= 2 * 1452 + 4; n++) {
    const payload = superPacket(n, n & 0xff);
    const before = p.wire.length;
    p.a.sendPacket(p.a.peer('cluster-b')!, payload, NEXT_IPV4_VNET);
    for (const d of p.wire.slice(before)) if (d.from === 'a') assert.ok(d.bytes.length <= 1472, `payload ${n}: datagram of ${d.bytes.length} bytes`);
    assert.ok(p.deliveredB[p.deliveredB.length - 1]!.equals(payload), `payload ${n}`);
  }
  assert.equal(p.deliveredB.length, 25);
  assert.equal(p.b.counters.drops.malformed, 0);
});

test('fragments in any order (reversed, shuffled, interleaved across messages) reassemble', () => {
  const p = connected();
  const m1 = capture(p, superPacket(40_000, 1));
  const m2 = capture(p, superPacket(30_000, 2));
  for (const f of [...m1].reverse()) p.inject('b', f);
  assert.equal(p.deliveredB.length, 1);
  // a fixed shuffle: sort by a multiplicative hash of the position
  const mixed = m2
    .map((f, i): [number, Buffer] => [Math.imul(i + 1, 0x9e3779b1) >>> 0, f])
    .sort((x, y) => x[0] - y[0])
    .map((x) => x[1]);
  assert.equal(new Set(mixed.map((b) => b.toString('hex'))).size, m2.length, 'a permutation');
  const m3 = capture(p, superPacket(20_000, 3));
  for (let i = 0; i < Math.max(mixed.length, m3.length); i++) {
    if (mixed[i]) p.inject('b', mixed[i]!);
    if (m3[i]) p.inject('b', m3[i]!);
  }
  assert.equal(p.deliveredB.length, 3);
  assert.deepEqual(
    p.deliveredB.map((b) => [b.length, b[100]]).sort((x, y) => y[0]! - x[0]!),
    [
      [40_000, 1],
      [30_000, 2],
      [20_000, 3],
    ],
  );
});

test('a lost fragment loses only its message; the slot is given up after the timeout', () => {
  const p = connected();
  const m = capture(p, superPacket(20_000));
  for (const f of m.slice(1)) p.inject('b', f);
  assert.equal(p.deliveredB.length, 0);
  assert.equal(p.b.peer('cluster-a')!.reassembly!.pending, 1);
  p.clock.advance(1_100);
  assert.equal(p.b.peer('cluster-a')!.reassembly!.pending, 0);
  assert.equal(p.b.counters.drops.reassembly, 1);
  // the next message is unaffected
  p.a.sendPacket(p.a.peer('cluster-b')!, superPacket(20_000, 7), NEXT_IPV4_VNET);
  assert.equal(p.deliveredB.length, 1);
  // the missing fragment arriving late completes nothing and delivers nothing
  p.inject('b', m[0]!);
  assert.equal(p.deliveredB.length, 1);
});

test('duplicate fragments are dropped; after delivery every copy is a replay', () => {
  const p = connected();
  const m = capture(p, superPacket(10_000));
  p.inject('b', m[0]!);
  p.inject('b', m[0]!);
  assert.equal(p.b.counters.drops.fragment, 1);
  for (const f of m.slice(1)) p.inject('b', f);
  assert.equal(p.deliveredB.length, 1);
  const replays = p.b.counters.drops.replay;
  for (const f of m) p.inject('b', f);
  assert.equal(p.deliveredB.length, 1);
  assert.equal(p.b.counters.drops.replay - replays, m.length);
});

test('a tampered fragment, a forged one or one moved to another index never gets past the AEAD', () => {
  const p = connected();
  const cases: [string, (m: Buffer[]) => Buffer[]][] = [
    ['bit flip in the data', (m) => m.map((f, i) => (i === 2 ? Buffer.from(f).fill(0xff, 40, 41) : f))],
    [
      'next header changed (bound into the rebuilt associated data)',
      (m) =>
        m.map((f) => {
          const c = Buffer.from(f);
          c[1] = 0;
          return c;
        }),
    ],
    [
      'two fragments swapped (index rewritten)',
      (m) =>
        m.map((f, i) => {
          const c = Buffer.from(i === 0 ? m[1]! : i === 1 ? m[0]! : f);
          if (i < 2) c[2] = i;
          return c;
        }),
    ],
    [
      'a forged fragment replaces a real one',
      (m) => m.map((f, i) => (i === 1 ? Buffer.concat([f.subarray(0, FRAG_HEADER), randomBytes(f.length - FRAG_HEADER)]) : f)),
    ],
  ];
  for (const [name, mutate] of cases) {
    const auth = p.b.counters.drops.auth;
    const m = capture(p, superPacket(8_000));
    for (const f of mutate(m)) p.inject('b', f);
    assert.equal(p.deliveredB.length, 0, name);
    assert.equal(p.b.counters.drops.auth, auth + 1, name);
  }
  // the real traffic still flows afterwards
  p.a.sendPacket(p.a.peer('cluster-b')!, superPacket(8_000), NEXT_IPV4_VNET);
  assert.equal(p.deliveredB.length, 1);
});

test('fragments whose count or size disagree with their message are dropped as inconsistent', () => {
  const p = connected();
  const m = capture(p, superPacket(10_000));
  p.inject('b', m[0]!);
  const bad = Buffer.from(m[1]!);
  bad[3] = (bad[3] as number) + 1; // count
  p.inject('b', bad);
  assert.equal(p.b.counters.drops.fragment, 1);
  for (const f of m.slice(1)) p.inject('b', f);
  assert.equal(p.deliveredB.length, 1);
});

test('memory is bounded: a flood of fragments with valid SPI and fresh sequence numbers holds at most the slots', () => {
  const p = connected({ limits: { reassemblySlots: 4 } });
  const spi = p.b.peer('cluster-a')!.current!.localIndex;
  const f = Buffer.alloc(FRAG_HEADER + 1000, 0xaa);
  for (let i = 0; i < 5000; i++) {
    writeFragmentHeader(f, 0, NEXT_IPV4_VNET, i % 40, 40, spi, 10 + i, 1000);
    p.inject('b', f);
  }
  const r = p.b.peer('cluster-a')!.reassembly!;
  assert.ok(r.allocatedBytes <= 4 * (16 + MAX_FRAGMENTED_BODY), `${r.allocatedBytes} bytes`);
  assert.ok(r.pending <= 4);
  assert.equal(p.deliveredB.length, 0);
  assert.ok(p.b.counters.drops.reassembly >= 4990);
  // and the tunnel still works
  p.a.sendPacket(p.a.peer('cluster-b')!, superPacket(30_000), NEXT_IPV4_VNET);
  assert.equal(p.deliveredB.length, 1);
});

test('negotiation: a peer without FEATURE_FRAG gets whole datagrams; an endpoint without it drops fragments', () => {
  // B is a session-1 gateway: super-packets yes, fragments no
  const p = connected({ featuresB: FEATURE_VNET });
  const m = capture(p, superPacket(20_000));
  assert.equal(m.length, 1);
  assert.equal(m[0]![0], TYPE_DATA);
  assert.ok(m[0]!.length > 20_000);
  p.inject('b', m[0]!);
  assert.equal(p.deliveredB.length, 1);
  // fragments sent to it anyway are malformed there
  const q = connected({ featuresB: FEATURE_VNET });
  const frags = capture(connected(), superPacket(5_000));
  const malformed = q.b.counters.drops.malformed;
  for (const f of frags) q.inject('b', f);
  assert.equal(q.b.counters.drops.malformed - malformed, frags.length);
  assert.equal(q.deliveredB.length, 0);
});

test('fragment codec: encode/decode round trip and every header rule', () => {
  const data = Buffer.alloc(300, 7);
  const f = { next: NEXT_IPV4_VNET, index: 1, count: 3, spi: 0xdeadbeef, seq: 2 ** 40 + 5, size: 300, data };
  const b = fragment.encode(f);
  assert.equal(b.subarray(0, FRAG_HEADER).toString('hex'), '05030103' + 'deadbeef' + '0000010000000005' + '012c' + '0000');
  const d = fragment.decode(b);
  assert.deepEqual({ ...d, data: Buffer.from(d.data) }, f);
  const bad: [string, (x: Buffer) => Buffer, RegExp][] = [
    [
      'count 1',
      (x) => {
        x[3] = 1;
        return x;
      },
      /count 1 is not in 2\.\.64/,
    ],
    [
      'count 65',
      (x) => {
        x[3] = 65;
        return x;
      },
      /count 65/,
    ],
    [
      'index = count',
      (x) => {
        x[2] = 3;
        return x;
      },
      /index 3 is not below/,
    ],
    [
      'next header 1 (probe)',
      (x) => {
        x[1] = 1;
        return x;
      },
      /next header 1 cannot be fragmented/,
    ],
    [
      'reserved',
      (x) => {
        x[19] = 1;
        return x;
      },
      /reserved/,
    ],
    [
      'size below 64',
      (x) => {
        x.writeUInt16BE(10, 16);
        return x;
      },
      /size 10 is below 64/,
    ],
    [
      'too big in all',
      (x) => {
        x[3] = 64;
        x.writeUInt16BE(1100, 16);
        return x;
      },
      /exceed/,
    ],
    ['short middle fragment', (x) => x.subarray(0, x.length - 1), /carries 299 bytes, expected 300/],
    [
      'sequence above 2^53',
      (x) => {
        x.writeUInt32BE(0x200000, 8);
        return x;
      },
      /2\^53/,
    ],
  ];
  for (const [name, mutate, re] of bad) assert.throws(() => fragment.decode(mutate(Buffer.from(b))), re, name);
  // the last fragment may be shorter, not longer, not empty
  const last = fragment.encode({ ...f, index: 2, data: Buffer.alloc(10) });
  assert.equal(fragment.decode(last).data.length, 10);
  assert.throws(() => fragment.encode({ ...f, index: 2, data: Buffer.alloc(301) }), /expected 1\.\.300/);
  assert.throws(() => fragment.decode(last.subarray(0, FRAG_HEADER)), /needs 21 bytes/);
});

test('Reassembler: order, duplicates, inconsistency, eviction of the oldest, expiry', () => {
  const r = new Reassembler(2, 1000, 4, 100);
  const src = Buffer.from('aaaabbbbcc');
  assert.equal(r.add(1, 1, 2, 3, 4, src, 8, 2, 0), FRAG_PENDING);
  assert.equal(r.add(1, 1, 2, 3, 4, src, 8, 2, 0), FRAG_DUPLICATE);
  assert.equal(r.add(1, 1, 0, 4, 4, src, 0, 4, 0), FRAG_INCONSISTENT);
  assert.equal(r.add(1, 1, 0, 3, 4, src, 0, 4, 1), FRAG_PENDING);
  const slot = r.add(1, 1, 1, 3, 4, src, 4, 4, 2);
  assert.ok(slot >= 0);
  assert.equal(r.length(slot), 10);
  assert.equal(r.buffer(slot).toString('latin1', 4, 14), 'aaaabbbbcc');
  r.release(slot);
  // three messages, two slots: the oldest is evicted
  r.add(5, 1, 0, 2, 4, src, 0, 4, 10);
  r.add(5, 2, 0, 2, 4, src, 0, 4, 11);
  r.add(5, 3, 0, 2, 4, src, 0, 4, 12);
  assert.equal(r.counters.evicted, 1);
  assert.equal(r.add(5, 1, 1, 2, 4, src, 4, 2, 13), FRAG_PENDING, 'message 1 starts over');
  assert.equal(r.expire(500), 2);
  assert.equal(r.pending, 0);
  assert.ok(r.allocatedBytes <= 2 * 1004);
});
