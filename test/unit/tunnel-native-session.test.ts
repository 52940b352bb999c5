// Tunnel sessions in the C addon (native/src/session.c) against the TypeScript reference
// (session.ts with node:crypto, replay-window.ts): the same keys and inputs give
// byte-identical ciphertext frames and the same accepted/dropped decisions for in-order,
// reordered, replayed, out-of-window, tampered and truncated packets; a seeded fuzz run of
// mutated packets and window operations never crashes and never disagrees; and whole
// endpoints with native sessions on one or both sides keep the protocol's outcomes
// (handshake, traffic both ways, replays dropped, fragments, rekey in flight).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { NativeSessionCrypto, REPLAY_WINDOW_SIZE, Session, type SessionKeys } from '../../src/multicluster/dataplane/tunnel/index.js';
import { DATA_HEADER, FEATURE_FRAG, FEATURE_VNET, NEXT_IPV4, NEXT_IPV4_VNET, TAG_LEN, writeDataHeader } from '../../src/multicluster/wire/tunnel/index.js';
import { native } from '../../src/platform/native/index.js';
import { prng } from '../helpers/prng.js';
import { fakePacket, tunnelPair } from '../helpers/tunnel-pair.js';

const skip = (() => {
  try {
    return typeof native().tunnelSessionNew === 'function' ? false : 'addon without tunnel sessions';
  } catch {
    return 'no native addon';
  }
})();

function keys(): SessionKeys {
  return { send: randomBytes(32), recv: randomBytes(32), sendSalt: randomBytes(4), recvSalt: randomBytes(4) };
}

/** the other side of `k` (its send key is our receive key) */
function mirror(k: SessionKeys): SessionKeys {
  return { send: k.recv, recv: k.send, sendSalt: k.recvSalt, recvSalt: k.sendSalt };
}

const nativeCrypto = (k: SessionKeys): NativeSessionCrypto => new NativeSessionCrypto(k);

/** One data message of `s` (header ‖ ciphertext ‖ tag) with sequence `seq`. */
function message(s: Session, seq: number, next: number, payload: Buffer, spi = 7): Buffer {
  const h = Buffer.alloc(DATA_HEADER);
  writeDataHeader(h, 0, next, spi, seq);
  const [ct, tag] = s.seal(h, seq, payload);
  return Buffer.concat([h, ct, tag]);
}

type Decision = 'ok' | 'replay' | 'auth' | 'malformed';

/** TunnelEndpoint.receiveData + accept, the decision only (header rules, window check, open, window update). */
function receive(s: Session, msg: Buffer): { d: Decision; plain?: Buffer } {
  if (msg.length < DATA_HEADER + TAG_LEN || msg[0] !== 4 || msg[2] !== 0 || msg[3] !== 0 || (msg[1] as number) > 5) return { d: 'malformed' };
  const hi = msg.readUInt32BE(8);
  if (hi >= 0x200000) return { d: 'malformed' };
  const seq = hi * 0x100000000 + msg.readUInt32BE(12);
  if (!s.replay.check(seq)) return { d: 'replay' };
  const plain = s.open(msg, seq);
  if (plain === undefined) return { d: 'auth' };
  if (!s.replay.update(seq)) return { d: 'replay' };
  return { d: 'ok', plain };
}

test('seal: the same keys, sequence numbers and payloads give byte-identical frames', { skip }, () => {
  const k = keys();
  const js = new Session(1, 2, true, 0, k);
  const nat = new Session(1, 2, true, 0, k, nativeCrypto);
  const r = prng(29);
  const sizes = [0, 1, 16, 20, 1400, 1452, 1453, 4096, 65535, 65546];
  for (let i = 0; i < 200; i++) sizes.push(r() % 66000);
  for (const n of sizes) {
    const payload = randomBytes(n);
    const seq = js.takeSeq();
    assert.equal(nat.takeSeq(), seq, 'the send counters agree');
    const next = n === 16 ? 1 : n % 2 === 0 ? NEXT_IPV4 : NEXT_IPV4_VNET;
    const h = Buffer.alloc(DATA_HEADER);
    writeDataHeader(h, 0, next, 0xabcdef01, seq);
    const [c1, t1] = js.seal(h, seq, payload);
    const [c2, t2] = nat.seal(h, seq, payload);
    assert.ok(c1.equals(c2) && t1.equals(t2), `payload of ${n} bytes at seq ${seq}: the frames differ`);
  }
  // a counter handed over mid-session continues where it was
  const at = new NativeSessionCrypto(k);
  for (let i = 0; i < 5; i++) at.takeSeq();
  assert.equal(at.sendSeq, 5);
  at.close();
  nat.close();
});

test('open and the replay window: in order, reordered, replayed, out of window, tampered, truncated: the same decisions', { skip }, () => {
  const k = keys();
  const tx = new Session(9, 7, true, 0, mirror(k));
  const js = new Session(7, 9, false, 0, k);
  const nat = new Session(7, 9, false, 0, k, nativeCrypto);
  const r = prng(4500);
  const sent: Buffer[] = [];
  for (let i = 0; i < 6000; i++) sent.push(message(tx, tx.takeSeq(), i % 3 === 0 ? NEXT_IPV4_VNET : NEXT_IPV4, randomBytes(r() % 1500)));
  const inputs: [string, Buffer][] = [];
  for (let i = 0; i < sent.length; i++) {
    const m = sent[i] as Buffer;
    const kind = r() % 20;
    if (kind === 0 && i > 0) inputs.push(['replayed', sent[r() % i] as Buffer]);
    if (kind === 1 && i > 2100) inputs.push(['out of window', sent[i - REPLAY_WINDOW_SIZE - 1 - (r() % 50)] as Buffer]);
    if (kind === 2) {
      const t = Buffer.from(m);
      const at = r() % t.length;
      t[at] = (t[at] as number) ^ (1 << (r() % 8));
      inputs.push(['tampered', t]);
    }
    if (kind === 3) inputs.push(['truncated', m.subarray(0, r() % m.length)]);
    if (kind === 4 && i + 40 < sent.length) {
      // reordered: a later packet first (the earlier one still comes in order)
      inputs.push(['reordered', sent[i + 1 + (r() % 39)] as Buffer]);
    }
    if (kind === 5 && i + 3000 < sent.length) inputs.push(['far ahead', sent[i + 2100 + (r() % 900)] as Buffer]);
    inputs.push(['in order', m]);
  }
  const seen = new Map<string, Record<Decision, number>>();
  for (const [name, m] of inputs) {
    const a = receive(js, m);
    const b = receive(nat, m);
    assert.equal(b.d, a.d, `${name} input of ${m.length} bytes: native ${b.d}, reference ${a.d}`);
    if (a.plain) assert.ok(b.plain?.equals(a.plain), `${name}: the plaintexts differ`);
    const row = seen.get(name) ?? { ok: 0, replay: 0, auth: 0, malformed: 0 };
    row[a.d]++;
    seen.set(name, row);
  }
  assert.equal(nat.replay.highest, js.replay.highest);
  // every kind of input was exercised and decided as the protocol says
  assert.ok((seen.get('replayed')?.replay ?? 0) > 100, JSON.stringify([...seen]));
  assert.ok((seen.get('out of window')?.replay ?? 0) > 50);
  assert.equal(seen.get('tampered')?.ok ?? 0, 0, 'no tampered packet is accepted');
  assert.equal(seen.get('truncated')?.ok ?? 0, 0, 'no truncated packet is accepted');
  assert.ok((seen.get('far ahead')?.ok ?? 0) > 10);
  assert.ok((seen.get('in order')?.replay ?? 0) > 0, 'packets left behind by a far-ahead jump are dropped as out of window');
  nat.close();
});

test('fuzz: 20k mutated messages and window operations: the native session never crashes and never disagrees', { skip }, () => {
  const seed = Number(process.env['FUZZ_SEED'] ?? 0x5eed29);
  const r = prng(seed);
  const k = keys();
  const tx = new Session(9, 7, true, 0, mirror(k));
  const js = new Session(7, 9, false, 0, k);
  const nat = new Session(7, 9, false, 0, k, nativeCrypto);
  const pool: Buffer[] = [];
  for (let i = 0; i < 64; i++) pool.push(message(tx, tx.takeSeq() * 37, r() % 6, randomBytes(r() % 200)));
  for (let i = 0; i < 20_000; i++) {
    const op = r() % 10;
    if (op === 0) {
      // window operations alone, on sequence numbers around the top and far away
      const top = Math.max(0, js.replay.highest);
      const pick = r() % 4;
      // far away, anywhere near the window, or on its edge (top - 2016 +- 2)
      const seq =
        pick === 0
          ? r() * 1024 + (r() % 1024)
          : pick === 1
            ? Math.max(0, top - REPLAY_WINDOW_SIZE - 2 + (r() % 5))
            : Math.max(0, top - REPLAY_WINDOW_SIZE - 64 + (r() % 4200));
      assert.equal(nat.replay.check(seq), js.replay.check(seq), `seed ${seed} step ${i}: check(${seq})`);
      assert.equal(nat.replay.update(seq), js.replay.update(seq), `seed ${seed} step ${i}: update(${seq})`);
      continue;
    }
    const base = pool[r() % pool.length] as Buffer;
    let m: Buffer;
    if (op === 1) m = randomBytes(r() % 80);
    else if (op === 2) m = base.subarray(0, r() % (base.length + 1));
    else {
      m = Buffer.from(base);
      const flips = 1 + (r() % 3);
      for (let f = 0; f < flips && m.length > 0; f++) m[r() % m.length] = r() & 0xff;
      if (op === 3) m[0] = 4;
    }
    const a = receive(js, m);
    const b = receive(nat, m);
    assert.equal(b.d, a.d, `seed ${seed} step ${i}: ${m.toString('hex').slice(0, 80)}`);
  }
  assert.equal(nat.replay.highest, js.replay.highest);
  nat.close();
});

test('endpoints with native sessions: handshake, traffic both ways, fragments, replays dropped, rekey in flight', { skip }, () => {
  for (const [na, nb] of [
    [true, false],
    [true, true],
  ] as const) {
    const p = tunnelPair({ nativeA: na, nativeB: nb, featuresA: FEATURE_VNET | FEATURE_FRAG, featuresB: FEATURE_VNET | FEATURE_FRAG, maxDatagram: 1472 });
    p.a.start();
    p.b.start();
    p.clock.advance(300);
    const a = p.a.peer('cluster-b');
    const b = p.b.peer('cluster-a');
    assert.equal(a?.status, 'connected');
    assert.ok(a?.current?.crypto !== undefined, 'A seals through the addon');
    assert.equal(b?.current?.crypto !== undefined, nb);
    for (let i = 0; i < 50; i++) {
      p.a.sendPacket(a, fakePacket(`a->b ${i}`));
      p.b.sendPacket(b as NonNullable<typeof b>, fakePacket(`b->a ${i}`, '10.1.0.5'));
    }
    assert.equal(p.deliveredB.length, 50);
    assert.equal(p.deliveredA.length, 50);
    // a super-packet sealed once, sent in fragments, reassembled and opened
    const big = Buffer.alloc(30_000, 0x5a);
    big.writeUInt32BE(30_000, 20);
    p.a.sendPacket(a, big, NEXT_IPV4_VNET);
    assert.ok(p.deliveredB.at(-1)?.equals(big));
    // replays of everything A sent: all dropped
    const replays = p.b.counters.drops.replay;
    const fromA = p.wire.filter((d) => d.from === 'a' && (d.bytes[0] === 4 || d.bytes[0] === 5));
    for (const d of fromA) p.inject('b', d.bytes);
    assert.equal(p.b.counters.drops.replay - replays, fromA.length);
    // rekey in flight: traffic keeps flowing across two rekeys and nothing is lost
    let delivered = p.deliveredB.length;
    for (let step = 0; step < 300; step++) {
      p.clock.advance(1000);
      p.a.sendPacket(a, fakePacket(`rekey ${step}`));
      assert.equal(p.deliveredB.length, ++delivered, `step ${step}: a packet was lost`);
    }
    assert.ok(a.rekeys >= 2, `rekeys ${a.rekeys}`);
    p.a.close();
    p.b.close();
  }
});
