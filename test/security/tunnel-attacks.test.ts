// Attack regressions for the tunnel (docs/tunnel-protocol.md): every bad packet is dropped and counted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  TYPE_DATA,
  TYPE_INIT,
  TYPE_RESPONSE,
  TYPE_FRAGMENT,
  FEATURE_FRAG,
  FEATURE_VNET,
  FRAG_HEADER,
  NEXT_IPV4_VNET,
  writeFragmentHeader,
} from '../../src/multicluster/wire/tunnel/index.js';
import { fakePacket, tunnelPair, type Pair } from '../helpers/tunnel-pair.js';

function connected(): Pair {
  const p = tunnelPair();
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  assert.equal(p.a.peer('cluster-b')!.status, 'connected');
  return p;
}

function sendData(p: Pair, n: number): Buffer[] {
  const peer = p.a.peer('cluster-b')!;
  const before = p.wire.length;
  for (let i = 0; i < n; i++) p.a.sendPacket(peer, fakePacket(`pkt-${i}`));
  return p.wire
    .slice(before)
    .filter((d) => d.from === 'a' && d.bytes[0] === TYPE_DATA && d.bytes[1] === 0)
    .map((d) => d.bytes);
}

test('replayed data packets are dropped and counted, nothing is delivered twice', () => {
  const p = connected();
  const pkts = sendData(p, 5);
  assert.equal(p.deliveredB.length, 5);
  for (const x of pkts) p.inject('b', x);
  assert.equal(p.deliveredB.length, 5);
  assert.equal(p.b.counters.drops.replay, 5);
});

test('reordered packets inside the window are accepted once; packets older than the window are dropped', () => {
  const p = connected();
  p.link.filter = (d) => d.from !== 'a' || d.bytes[0] !== TYPE_DATA || d.bytes[1] !== 0; // hold a's data
  const pkts = sendData(p, 3000);
  p.link.filter = undefined;
  const order = [...pkts.keys()].reverse(); // newest first
  for (const i of order) p.inject('b', pkts[i]!);
  // the newest 2016 arrive; the rest are too old for the window
  assert.equal(p.deliveredB.length, 2016);
  assert.equal(p.b.counters.drops.replay, 3000 - 2016);
  // a small reorder (swap neighbours) loses nothing
  const q = connected();
  q.link.filter = (d) => d.from !== 'a' || d.bytes[0] !== TYPE_DATA || d.bytes[1] !== 0;
  const ps = sendData(q, 100);
  q.link.filter = undefined;
  for (let i = 0; i < 100; i += 2) {
    q.inject('b', ps[i + 1]!);
    q.inject('b', ps[i]!);
  }
  assert.equal(q.deliveredB.length, 100);
});

test('truncated packets are dropped as malformed or auth, never delivered', () => {
  const p = connected();
  p.link.filter = (d) => d.from !== 'a' || d.bytes[0] !== TYPE_DATA || d.bytes[1] !== 0;
  const [pkt] = sendData(p, 1);
  p.link.filter = undefined;
  const before = p.deliveredB.length;
  for (let len = 0; len < pkt!.length; len++) p.inject('b', pkt!.subarray(0, len));
  assert.equal(p.deliveredB.length, before);
  const d = p.b.counters.drops;
  assert.equal(d.malformed + d.auth, pkt!.length);
  assert.equal(d.malformed, 32);
});

test('a flipped bit anywhere in header or payload fails authentication', () => {
  const p = connected();
  p.link.filter = (d) => d.from !== 'a' || d.bytes[0] !== TYPE_DATA || d.bytes[1] !== 0;
  const [pkt] = sendData(p, 1);
  p.link.filter = undefined;
  let dropped = 0;
  for (let i = 1; i < pkt!.length; i++) {
    if (i >= 4 && i < 8) continue; // SPI: a changed SPI names no session (counted as stale)
    const t = Buffer.from(pkt!);
    t[i]! ^= 0x01;
    p.inject('b', t);
    dropped++;
  }
  assert.equal(p.deliveredB.length, 0);
  const d = p.b.counters.drops;
  // a flip in the sequence number may land above the reject limit (stale) or on a number already seen (replay)
  assert.equal(d.auth + d.malformed + d.stale + d.replay, dropped);
  assert.ok(d.auth > 20);
  // the genuine packet still gets through: forgeries did not advance the window
  p.inject('b', pkt!);
  assert.equal(p.deliveredB.length, 1);
});

test('forged data packets and forged handshakes are dropped; random garbage never throws', () => {
  const p = connected();
  const spi = p.a.peer('cluster-b')!.current!.remoteIndex;
  for (let i = 0; i < 200; i++) {
    const f = Buffer.alloc(16 + 40 + 16);
    f[0] = TYPE_DATA;
    f.writeUInt32BE(spi, 4);
    f.writeUInt32BE(1000 + i, 12);
    p.inject('b', f);
  }
  assert.equal(p.b.counters.drops.auth, 200);
  const init = Buffer.alloc(200, 7);
  init[0] = TYPE_INIT;
  init[2] = 0;
  init[3] = 0;
  p.inject('b', init);
  const resp = Buffer.alloc(200, 9);
  resp[0] = TYPE_RESPONSE;
  resp[2] = 0;
  resp[3] = 0;
  p.inject('a', resp);
  assert.equal(p.b.counters.drops.auth, 201);
  assert.equal(p.deliveredB.length, 0);
  for (let i = 0; i < 2000; i++) p.inject('b', Buffer.from(Array.from({ length: i % 120 }, (_, j) => (i * 31 + j * 7) & 255)));
  assert.equal(p.deliveredB.length, 0);
});

test('a replayed handshake initiation does not reset the live session', () => {
  const p = connected();
  const init = p.wire.find((d) => d.from === 'a' && d.bytes[0] === TYPE_INIT)!.bytes;
  const before = p.b.peer('cluster-a')!.current;
  p.inject('b', init);
  assert.ok(p.b.counters.drops.replay >= 1);
  assert.equal(p.b.peer('cluster-a')!.current, before);
  assert.equal(p.a.peer('cluster-b')!.status, 'connected');
});

test('a rewritten version byte in the handshake (downgrade) breaks the handshake', () => {
  const p = tunnelPair();
  p.link.filter = (d) => {
    if (d.bytes[0] === TYPE_INIT && d.from === 'a') {
      const t = Buffer.from(d.bytes);
      t[1] = 2;
      p.inject('b', t);
      return false;
    }
    return true;
  };
  p.a.start();
  p.clock.advance(300);
  assert.equal(p.a.peer('cluster-b')!.status, 'connecting');
  // the rewritten initiation fails mac1 at b: no session, and b names what it saw
  assert.equal(p.b.peer('cluster-a')!.current, undefined);
  assert.notEqual(p.b.peer('cluster-a')!.status, 'connected');
});

test('wrong PSK: no tunnel, and a clear error on both sides', () => {
  const p = tunnelPair({ pskA: 'psk-one', pskB: 'psk-two' });
  p.a.start();
  p.clock.advance(20_000);
  const rec = p.a.records()[0]!;
  assert.equal(rec.status, 'error');
  // a initiates and hears nothing back; b sees a's initiations fail mac1
  assert.equal(rec.reason, 'no-handshake-answer');
  assert.match(rec.statusMessage, /^no-handshake-answer: \d+ handshake initiation\(s\) to .* unanswered/);
  const recB = p.b.records()[0]!;
  assert.equal(recB.status, 'error');
  assert.equal(recB.reason, 'psk-mismatch');
  assert.match(recB.statusMessage, /^psk-mismatch: .*does not authenticate under this gateway's PSK/);
  assert.ok(p.eventsA.some((e) => e.code === 'STRAIT_ERR_TUNNEL_HANDSHAKE_TIMEOUT'));
  assert.ok(
    p.eventsB.some((e) => e.code === 'STRAIT_ERR_TUNNEL_AUTH' && /different PSK/.test(e.msg)),
    JSON.stringify(p.eventsB),
  );
  assert.ok(p.b.counters.drops.auth >= 3);
  assert.equal(p.b.peer('cluster-a')!.current, undefined);
  assert.equal(p.a.sendPacket(p.a.peer('cluster-b')!, fakePacket('secret')), false);
  assert.equal(p.deliveredB.length, 0);
});

// --- fragments (feature bit 1, docs/tunnel-protocol.md) ----------------------------------

function fragPair(): Pair {
  const p = tunnelPair({ featuresA: FEATURE_VNET | FEATURE_FRAG, featuresB: FEATURE_VNET | FEATURE_FRAG, maxDatagram: 1472 });
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  return p;
}

function sendSuper(p: Pair, n: number, fill: number): Buffer[] {
  const before = p.wire.length;
  p.a.sendPacket(p.a.peer('cluster-b')!, Buffer.alloc(n, fill), NEXT_IPV4_VNET);
  return p.wire
    .slice(before)
    .filter((d) => d.from === 'a' && d.bytes[0] === TYPE_FRAGMENT)
    .map((d) => d.bytes);
}

test('fragments: a replayed set of a delivered message is dropped as replay and delivers nothing', () => {
  const p = fragPair();
  const frags = sendSuper(p, 30_000, 1);
  assert.ok(frags.length > 10);
  assert.equal(p.deliveredB.length, 1);
  for (const f of frags) p.inject('b', f);
  assert.equal(p.deliveredB.length, 1);
  assert.equal(p.b.counters.drops.replay, frags.length);
});

test('fragments: a flood with unknown SPIs costs no reassembly memory', () => {
  const p = fragPair();
  const f = Buffer.alloc(FRAG_HEADER + 1000, 0x33);
  for (let i = 0; i < 2000; i++) {
    writeFragmentHeader(f, 0, NEXT_IPV4_VNET, i % 30, 30, (0x12345678 + i) >>> 0, i, 1000);
    p.inject('b', f);
  }
  assert.equal(p.b.counters.drops.stale, 2000);
  assert.equal(p.b.peer('cluster-a')!.reassembly, undefined);
});

test('fragments: a piece spliced into another message (sequence rewritten) spoils that message only, never delivers', () => {
  const p = fragPair();
  const m1 = sendSuper(p, 10_000, 1);
  p.link.filter = (d) => d.from !== 'a';
  const m2 = sendSuper(p, 10_000, 2);
  p.link.filter = undefined;
  const spliced = Buffer.from(m1[1]!);
  spliced.set(m2[0]!.subarray(8, 16), 8); // m2's sequence number on m1's piece
  const auth = p.b.counters.drops.auth;
  for (const [i, f] of m2.entries()) p.inject('b', i === 1 ? spliced : f);
  assert.equal(p.deliveredB.length, 1, 'only m1 (delivered before)');
  assert.equal(p.b.counters.drops.auth, auth + 1);
});

test('feature-bit downgrade: rewriting the encrypted handshake payload (where the feature bits are) breaks the handshake', () => {
  const p = fragPair();
  const q = tunnelPair({ featuresA: FEATURE_VNET | FEATURE_FRAG, featuresB: FEATURE_VNET | FEATURE_FRAG });
  q.link.up = false;
  q.a.start();
  const init = Buffer.from(q.wire.find((d) => d.bytes[0] === TYPE_INIT)!.bytes);
  init[49] = (init[49] as number) ^ 0x02; // the features byte of payload1 (ciphertext): clear FEATURE_FRAG
  const auth = q.b.counters.drops.auth;
  q.inject('b', init);
  assert.equal(q.b.counters.drops.auth, auth + 1);
  // no session; a handshake that fails mac1 from the peer's address is named as a PSK mismatch
  assert.notEqual(q.b.peer('cluster-a')!.status, 'connected');
  assert.equal(q.b.peer('cluster-a')!.current, undefined);
  assert.equal(p.a.peer('cluster-b')!.features & (FEATURE_VNET | FEATURE_FRAG), FEATURE_VNET | FEATURE_FRAG, 'an untouched handshake negotiates both bits');
});
