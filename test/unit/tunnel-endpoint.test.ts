import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FEATURE_FENCE_NOTICE, FEATURE_HEALTH, TYPE_COOKIE, TYPE_DATA, TYPE_INIT } from '../../src/multicluster/wire/tunnel/index.js';
import { ADDR_B, fakePacket, tunnelPair } from '../helpers/tunnel-pair.js';

test('handshake connects both sides and carries packets both ways', () => {
  const p = tunnelPair();
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  assert.equal(p.a.peer('cluster-b')?.status, 'connected');
  assert.equal(p.b.peer('cluster-a')?.status, 'connected');
  const peerB = p.a.peer('cluster-b')!;
  assert.ok(p.a.sendPacket(peerB, fakePacket('hello-b')));
  assert.equal(p.deliveredB.length, 1);
  assert.match(p.deliveredB[0]!.toString(), /hello-b/);
  assert.ok(p.b.sendPacket(p.b.peer('cluster-a')!, fakePacket('hello-a', '10.1.0.7')));
  assert.match(p.deliveredA[0]!.toString(), /hello-a/);
  const rec = p.a.records()[0]!;
  assert.equal(rec.status, 'connected');
  assert.equal(rec.txPackets, 1);
  assert.deepEqual(rec.subnets, ['10.2.0.0/16', '100.2.0.0/16']);
  assert.equal(rec.nat, false);
  assert.ok(p.a.counters.handshakesCompleted >= 1);
  assert.ok(p.b.counters.handshakesResponded >= 1);
});

test('packets sent before the handshake completes are queued, then delivered', () => {
  const p = tunnelPair();
  p.link.up = false;
  p.a.start();
  const peer = p.a.peer('cluster-b')!;
  assert.equal(p.a.sendPacket(peer, fakePacket('early')), false);
  p.link.up = true;
  p.clock.advance(7000); // retry after rekeyTimeout
  assert.equal(peer.status, 'connected');
  assert.ok(p.deliveredB.some((x) => x.toString().includes('early')));
});

test('route() finds the peer by destination CIDR', () => {
  const p = tunnelPair();
  assert.equal(p.a.route(0x0a020305)?.clusterId, 'cluster-b');
  assert.equal(p.a.route(0x64020001)?.clusterId, 'cluster-b');
  assert.equal(p.a.route(0x0a030001), undefined);
});

test('keepalives measure RTT and dead-peer detection re-handshakes', () => {
  const p = tunnelPair();
  p.a.start();
  p.b.start();
  p.clock.advance(3000);
  const peer = p.a.peer('cluster-b')!;
  assert.notEqual(peer.rttAvgMs, undefined);
  assert.equal(p.a.records()[0]!.rttAvgMs, 0); // the manual clock does not move while packets fly
  p.link.up = false;
  // the health bound: error 1.8 s after the last answered probe (docs/faults.md)
  p.clock.advance(1500);
  assert.equal(peer.status, 'connected');
  p.clock.advance(400);
  assert.equal(peer.status, 'error');
  assert.equal(peer.reason, 'loss 100%');
  assert.match(p.a.records()[0]!.statusMessage, /^loss 100%: no probe answered for \d+ ms/);
  // sessions dropped after deadAfterMs (5 s): the re-handshake is not answered either
  p.clock.advance(3800);
  assert.equal(peer.status, 'error');
  assert.equal(peer.reason, 'no-handshake-answer');
  p.link.up = true;
  p.clock.advance(8000);
  assert.equal(peer.status, 'connected');
});

test('rekey by time: a new session replaces the old one without loss', () => {
  const p = tunnelPair({ limits: { rekeyAfterMs: 10_000, rejectAfterMs: 15_000 } });
  p.a.start();
  p.b.start();
  p.clock.advance(500);
  const peer = p.a.peer('cluster-b')!;
  const first = peer.current;
  p.clock.advance(11_000);
  assert.notEqual(peer.current, first);
  assert.ok(p.a.counters.rekeys + p.b.counters.rekeys >= 1);
  for (let i = 0; i < 50; i++) {
    p.clock.advance(1000);
    assert.ok(p.a.sendPacket(peer, fakePacket(`t${i}`)), `packet ${i} sent`);
  }
  assert.equal(p.deliveredB.length, 50);
  assert.equal(p.b.counters.drops.auth, 0);
});

test('rekey by volume: after rekeyAfterPackets a new handshake runs', () => {
  const p = tunnelPair({ limits: { rekeyAfterPackets: 100, rejectAfterPackets: 200 } });
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  const peer = p.a.peer('cluster-b')!;
  const first = peer.current!;
  for (let i = 0; i < 150; i++) p.a.sendPacket(peer, fakePacket(`v${i}`));
  assert.notEqual(peer.current, first);
  assert.ok(first.sendSeq <= 200);
  assert.equal(p.deliveredB.length, 150);
});

test('under load the responder answers with a cookie and accepts the retry with mac2', () => {
  const p = tunnelPair({ limits: { handshakeRateLimit: 0 } });
  p.a.start();
  assert.ok(
    p.wire.some((d) => d.from === 'b' && d.bytes[0] === TYPE_COOKIE),
    'cookie reply sent',
  );
  assert.equal(p.a.peer('cluster-b')!.status, 'connecting');
  assert.ok(p.a.peer('cluster-b')!.cookie, 'initiator stored the cookie');
  p.clock.advance(7000);
  assert.equal(p.a.peer('cluster-b')!.status, 'connected');
  assert.ok(p.b.counters.cookiesSent >= 1);
  // the cookie reply is not larger than the initiation it answers (no amplification)
  const init = p.wire.find((d) => d.bytes[0] === TYPE_INIT)!;
  const cookie = p.wire.find((d) => d.bytes[0] === TYPE_COOKIE)!;
  assert.ok(cookie.bytes.length <= init.bytes.length);
  assert.ok(p.wire.some((d) => d.bytes[0] === TYPE_DATA));
});

test('a new PSK (re-join) re-handshakes; the old session carries traffic until the peer switches too', () => {
  const p = tunnelPair();
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  const peerB = p.a.peer('cluster-b')!;
  const before = p.a.counters.handshakesCompleted;
  assert.equal(p.a.setPsk('psk-for-tests'), false, 'the same PSK changes nothing');
  // only A has the new PSK: its handshake fails (auth at B), the established session still works
  assert.equal(p.a.setPsk('psk-after-rejoin'), true);
  p.clock.advance(300);
  assert.ok(p.b.counters.drops.auth >= 1, 'B refuses the handshake under the PSK it does not have');
  assert.equal(p.a.counters.handshakesCompleted, before);
  assert.ok(p.a.sendPacket(peerB, fakePacket('during-switch')));
  assert.ok(p.deliveredB.some((x) => x.toString().includes('during-switch')));
  // B switches as well: the next handshake completes under the new PSK and traffic flows on it
  assert.equal(p.b.setPsk('psk-after-rejoin'), true);
  p.clock.advance(300);
  assert.ok(p.a.counters.handshakesCompleted + p.a.counters.handshakesResponded > before, 'a handshake under the new PSK completed');
  assert.equal(peerB.status, 'connected');
  assert.ok(p.a.sendPacket(peerB, fakePacket('after-switch')));
  assert.ok(p.deliveredB.some((x) => x.toString().includes('after-switch')));
  // and a peer still on the old PSK can no longer handshake with either
  const stale = tunnelPair({ pskA: 'psk-after-rejoin', pskB: 'psk-for-tests' });
  stale.a.start();
  stale.b.start();
  stale.clock.advance(300);
  assert.notEqual(stale.a.peer('cluster-b')?.status, 'connected');
});

test('health: a peer that switched to another PSK is psk-mismatch on both sides (old session still up), a common PSK clears it', () => {
  const p = tunnelPair({ limits: { rekeyTimeoutMs: 500 } });
  p.a.start();
  p.b.start();
  p.clock.advance(1000);
  const atA = p.a.peer('cluster-b')!;
  const atB = p.b.peer('cluster-a')!;
  assert.equal(atA.status, 'connected');
  assert.equal(atB.status, 'connected');
  // cluster-b joined with another broker-info: its gateway reloads a new PSK, cluster-a keeps the old one
  assert.equal(p.b.setPsk('another-psk-0123456789abcdef0123456789'), true);
  p.clock.advance(200);
  assert.equal(atA.status, 'error');
  assert.equal(atA.reason, 'psk-mismatch');
  assert.match(p.a.records()[0]!.statusMessage, /^psk-mismatch: .*joined with a different broker-info/);
  // cluster-b: cluster-a told it over the old session (next header 4)
  assert.equal(atB.status, 'error', JSON.stringify(p.b.records()[0]));
  assert.equal(atB.reason, 'psk-mismatch');
  assert.match(p.b.records()[0]!.statusMessage, /cluster-a reports that this gateway's handshakes do not authenticate/);
  p.clock.advance(6000);
  assert.equal(atB.reason, 'psk-mismatch');
  // the fix: both on one PSK
  p.a.setPsk('another-psk-0123456789abcdef0123456789');
  p.clock.advance(1500);
  assert.equal(atA.status, 'connected', JSON.stringify(p.a.records()[0]));
  assert.equal(atB.status, 'connected', JSON.stringify(p.b.records()[0]));
});

test('health: a peer without the PSK-mismatch notice (an older version) still learns it from its unanswered initiations', () => {
  const p = tunnelPair({ limits: { rekeyTimeoutMs: 500 } });
  p.a.start();
  p.b.start();
  p.clock.advance(1000);
  // cluster-a sends no notice (as to a peer that never advertised feature bit 2, or as an older cluster-a)
  p.a.peer('cluster-b')!.features &= ~FEATURE_HEALTH;
  p.b.setPsk('another-psk-0123456789abcdef0123456789');
  p.clock.advance(200);
  const atB = p.b.peer('cluster-a')!;
  assert.equal(atB.status, 'connected');
  p.clock.advance(6000);
  assert.equal(atB.reason, 'psk-mismatch');
  assert.match(p.b.records()[0]!.statusMessage, /handshake initiations .* unanswered while the session made before answers probes/);
});

test('health: latency statistics and loss from answered probes; a lossy link stays connected', () => {
  const p = tunnelPair();
  p.a.start();
  p.b.start();
  p.clock.advance(1000);
  let n = 0;
  // drop every third data datagram from a (probes and replies alike)
  p.link.filter = (d) => !(d.from === 'a' && d.bytes[0] === TYPE_DATA && ++n % 3 === 0);
  const seen = new Set<string>();
  for (let i = 0; i < 100; i++) {
    p.clock.advance(100);
    seen.add(p.a.peer('cluster-b')!.status);
  }
  assert.deepEqual([...seen], ['connected']);
  const r = p.a.records()[0]!;
  const loss = parseFloat(r.loss);
  assert.ok(loss > 20 && loss < 45, r.loss);
  assert.ok(r.latency && r.latency.minMs <= r.latency.avgMs && r.latency.avgMs <= r.latency.maxMs);
});

test('health: a fenced peer (HA: it lost its lease) says so over its session: error "peer fenced" at once, until a probe is answered again', () => {
  const p = tunnelPair({ limits: { rekeyTimeoutMs: 500 } });
  p.a.start();
  p.b.start();
  p.clock.advance(1000);
  const atB = p.b.peer('cluster-a')!;
  assert.equal(atB.status, 'connected');
  assert.ok((p.b.peer('cluster-a')!.features & FEATURE_FENCE_NOTICE) !== 0, 'every endpoint of this version advertises the fence notice');
  // cluster-a's gateway is fenced: it sends nothing into the tunnel (its gateway drops every
  // datagram) but the notice, which the gateway lets past its fence
  let pass = false;
  p.link.filter = (d) => d.from !== 'a' || pass;
  pass = true;
  assert.equal(p.a.noticeFenced(), 1);
  pass = false;
  const addressBefore = atB.address;
  assert.equal(atB.status, 'error', JSON.stringify(p.b.records()[0]));
  assert.equal(atB.reason, 'peer fenced');
  assert.match(p.b.records()[0]!.statusMessage, /^peer fenced: cluster-a's gateway at .* lost its HA lease/);
  assert.ok(p.eventsB.some((e) => e.level === 'error' && /peer fenced/.test(e.msg)));
  // it stays so while the fenced gateway is silent (not a generic loss), and moves nothing
  p.clock.advance(4000);
  assert.equal(atB.reason, 'peer fenced');
  assert.equal(atB.address, addressBefore);
  // the gateway that takes the lease over (here: the same endpoint, no longer fenced) answers: connected again
  p.link.filter = undefined;
  p.clock.advance(3000);
  assert.equal(atB.status, 'connected', JSON.stringify(p.b.records()[0]));
});

test('health: a peer without the fence notice (an older version) gets none; it sees the silence as a loss', () => {
  const p = tunnelPair();
  p.a.start();
  p.b.start();
  p.clock.advance(1000);
  p.a.peer('cluster-b')!.features &= ~FEATURE_FENCE_NOTICE;
  const before = p.wire.length;
  assert.equal(p.a.noticeFenced(), 0);
  assert.equal(p.wire.length, before, 'nothing sent');
  p.link.filter = (d) => d.from !== 'a';
  p.clock.advance(2500);
  assert.equal(p.b.peer('cluster-a')!.reason, 'loss 100%');
});

test('a peer that is not there yet: initiations back off (0.5, 1, 2, 4 s, then every 5 s), and it connects as soon as it starts and initiates itself', () => {
  const p = tunnelPair({ limits: { rekeyTimeoutMs: 500, handshakeAttempts: 20 } });
  p.link.up = false; // cluster-b's gateway has not started
  p.a.start();
  assert.equal(p.a.counters.handshakesInitiated, 1, 'the first initiation at start');
  const times: number[] = [0];
  let t = 50;
  let seen = p.a.counters.handshakesInitiated;
  for (; t <= 30_000; t += 50) {
    p.clock.advance(50);
    if (p.a.counters.handshakesInitiated !== seen) {
      seen = p.a.counters.handshakesInitiated;
      times.push(t);
    }
  }
  // with fixed 0.5 s retries it would be ~50 initiations in 30 s
  assert.ok(seen >= 8 && seen <= 11, `${seen} initiations in 30 s: ${times.join(', ')}`);
  const gaps = times.slice(1).map((x, i) => x - times[i]!);
  // each wait is the backoff step plus up to a third of jitter (the 50-ms sampling adds one step)
  const steps = [500, 1000, 2000, 4000, 5000, 5000];
  steps.forEach((w, i) => assert.ok(gaps[i]! >= w - 50 && gaps[i]! <= (w * 4) / 3 + 100, `wait ${i + 1}: ${gaps[i]} ms (step ${w})`));
  // the status says so from the time, not from the count
  assert.equal(p.a.peer('cluster-b')!.status, 'error');
  assert.equal(p.a.peer('cluster-b')!.reason, 'no-handshake-answer');
  // cluster-b starts: its own initiation is answered at once, whatever cluster-a's backoff
  p.link.up = true;
  p.b.start();
  p.clock.advance(100);
  assert.equal(p.a.peer('cluster-b')!.status, 'connected');
  assert.equal(p.b.peer('cluster-a')!.status, 'connected');
});

test('a rekey under way (a session answers) retries every rekeyTimeoutMs, without backoff', () => {
  const p = tunnelPair({ limits: { rekeyTimeoutMs: 500, rekeyAfterMs: 5_000 } });
  p.a.start();
  p.b.start();
  p.clock.advance(1000);
  // initiations are lost from now on (both ways), everything else flows: the session answers probes
  p.link.filter = (d) => d.bytes[0] !== TYPE_INIT;
  p.clock.advance(6000); // past both sides' rekey times (the responder's comes 2 x rekeyTimeoutMs later)
  const before = p.a.counters.handshakesInitiated;
  p.clock.advance(3000);
  const retries = p.a.counters.handshakesInitiated - before;
  // every 500-667 ms: 4 to 6 in 3 s (with the backoff it would be 1 or 2)
  assert.ok(retries >= 4 && retries <= 6, `${retries} initiations in 3 s of a rekey under way`);
  assert.equal(p.a.peer('cluster-b')!.status, 'connected', 'the old session still carries traffic');
});

test("a peer configured with an address that is not its cluster's active gateway any more (it failed over): a first handshake goes to the cluster's other gateways too, and the one that answers is the address", () => {
  const STALE = '192.0.2.9'; // the remote cluster's other gateway node, passive now: it answers nothing
  // known from the start (config standby): connected at the first initiation
  const known = tunnelPair({ addressed: true, peerB: { address: STALE, alternates: [ADDR_B] } });
  known.a.start();
  known.clock.advance(300);
  const peer = known.a.peer('cluster-b')!;
  assert.equal(peer.status, 'connected');
  assert.equal(peer.address, ADDR_B, 'the answer moved the address');
  assert.deepEqual(
    known.wire
      .filter((d) => d.from === 'a')
      .map((d) => d.to)
      .slice(0, 2),
    [STALE, ADDR_B],
    'one initiation, to the configured address and the other gateway',
  );
  assert.equal(known.a.counters.handshakesInitiated, 1, 'counted once');

  // learned later (the Endpoint records): asked at once, not at the next backoff step; but
  // only by an endpoint that initiates at all (a passive HA gateway never started it: its
  // initiation would pull the peer's tunnel away from the active gateway)
  const later = tunnelPair({ addressed: true, peerB: { address: STALE } });
  later.a.setPeerAlternates('cluster-b', [ADDR_B]);
  assert.equal(later.a.counters.handshakesInitiated, 0, 'not started: kept for later, nothing sent');
  later.a.setPeerAlternates('cluster-b', []);
  later.a.start();
  later.clock.advance(300);
  const p = later.a.peer('cluster-b')!;
  assert.notEqual(p.status, 'connected', 'nobody answers at the configured address');
  later.a.setPeerAlternates('cluster-b', [ADDR_B]);
  assert.equal(p.status, 'connected', 'at once');
  assert.equal(p.address, ADDR_B);
  // with a session, a record that names another address starts nothing (the session's own
  // source decides, as roaming does)
  const initiated = later.a.counters.handshakesInitiated;
  later.a.setPeerAlternates('cluster-b', [ADDR_B, '192.0.2.10']);
  assert.equal(later.a.counters.handshakesInitiated, initiated);
  assert.throws(() => later.a.setPeerAlternates('cluster-x', []), /cluster-x/);
});
