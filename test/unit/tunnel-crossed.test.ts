// Tunnel handshakes (docs/tunnel-protocol.md, "Handshake"): gateways whose handshakes
// cross, and a gateway restarted alone, must carry data with no authentication drop on either side.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakePacket, tunnelPair, type Pair } from '../helpers/tunnel-pair.js';

function traffic(p: Pair, n: number): void {
  for (let i = 0; i < n; i++) {
    p.a.sendPacket(p.a.peer('cluster-b')!, fakePacket(`a${i}`));
    p.b.sendPacket(p.b.peer('cluster-a')!, fakePacket(`b${i}`, '10.1.0.7'));
    p.clock.advance(100);
  }
}

function drops(p: Pair): string {
  return JSON.stringify({ a: p.a.counters.drops, b: p.b.counters.drops });
}

test('crossed handshakes: both initiations in flight at once, then data both ways, no auth drop', () => {
  const p = tunnelPair();
  p.link.up = false;
  p.a.start();
  p.b.start();
  const inits = p.wire.slice();
  p.link.up = true;
  // both initiations arrive after both were sent: the handshakes cross
  for (const d of inits) p.inject(d.from === 'a' ? 'b' : 'a', d.bytes);
  p.clock.advance(300);
  traffic(p, 50);
  p.clock.advance(30_000);
  traffic(p, 50);
  assert.equal(p.a.counters.drops.auth, 0, drops(p));
  assert.equal(p.b.counters.drops.auth, 0, drops(p));
  assert.ok(p.deliveredB.length >= 95, `B got ${p.deliveredB.length}/100: ${drops(p)}`);
  assert.ok(p.deliveredA.length >= 95, `A got ${p.deliveredA.length}/100: ${drops(p)}`);
});

for (const cross of [false, true]) {
  test(`one gateway restarted alone${cross ? ", its initiation crossing the other's" : ''}: data resumes, no auth drop`, () => {
    const p = tunnelPair();
    p.a.start();
    p.b.start();
    p.clock.advance(300);
    traffic(p, 20);
    // restart B: a fresh endpoint with the same identity, A keeps its sessions
    const fresh = tunnelPair();
    // the restarted process reads the same wall clock (its initiation's timestamp is newer)
    fresh.clock.advance(p.clock.now() - fresh.clock.now() + 1000);
    const b2 = fresh.b;
    // wire b2 into p: what b2 sends goes to p.a
    (b2 as unknown as { opts: { send: unknown; clock: unknown } }).opts.send = (chunks: Buffer | Buffer[]) => {
      const bytes = Buffer.isBuffer(chunks) ? Buffer.from(chunks) : Buffer.concat(chunks);
      p.wire.push({ from: 'b', bytes });
      if (p.link.up) p.inject('a', bytes);
    };
    p.b.close();
    p.b = b2;
    if (cross) {
      p.link.up = false;
      b2.start();
      p.a.initiate(p.a.peer('cluster-b')!);
      const n = p.wire.length;
      const inflight = p.wire.slice(n - 2);
      p.link.up = true;
      for (const d of inflight) p.inject(d.from === 'a' ? 'b' : 'a', d.bytes);
    } else {
      b2.start();
    }
    fresh.clock.advance(300);
    p.clock.advance(300);
    const before = { a: p.a.counters.drops.auth, b: b2.counters.drops.auth };
    for (let i = 0; i < 50; i++) {
      p.a.sendPacket(p.a.peer('cluster-b')!, fakePacket(`a${i}`));
      b2.sendPacket(b2.peer('cluster-a')!, fakePacket(`b${i}`, '10.1.0.7'));
      p.clock.advance(100);
      fresh.clock.advance(100);
    }
    assert.equal(p.a.counters.drops.auth - before.a, 0, drops(p));
    assert.equal(b2.counters.drops.auth - before.b, 0, drops(p));
    assert.ok(fresh.deliveredB.length >= 45, `restarted B got ${fresh.deliveredB.length}/50: ${drops(p)}`);
    assert.ok(p.deliveredA.length >= 20 + 45, `A got ${p.deliveredA.length - 20}/50 from the restarted B: ${drops(p)}`);
  });
}
