// The gateway's native data path thread (native/src/gwpath.c) against the TypeScript
// reference, with no namespace: the thread's tunnel and VXLAN sockets are the addon's on
// loopback, a FIFO stands in for the TUN device (the thread only read()s it for the send
// direction), a dgram socket is the remote gateway and another the node agent.
//   - receive: sealed messages and fragments (in order, reordered, replayed, tampered,
//     truncated, spoofed sources, probes, unknown sessions, another source port) give the
//     decisions of session.ts + replay-window.ts + Gateway.deliver(): the same packets reach
//     the node over VXLAN, the same drops are counted, and what is not bulk data goes up
//     to TypeScript byte for byte;
//   - send: TUN reads become byte-identical frames to node:crypto's for the same sequence
//     numbers (one datagram, or type-5 fragments of a super-packet sealed once); a packet
//     with no route goes up; the HA fence stops every datagram and counts it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Session, type SessionKeys } from '../../src/multicluster/dataplane/tunnel/index.js';
import {
  DATA_HEADER,
  FEATURE_FRAG,
  FEATURE_VNET,
  FRAG_HEADER,
  NEXT_IPV4,
  NEXT_IPV4_VNET,
  NEXT_PROBE,
  fragmentRule,
  writeDataHeader,
  writeFragmentHeader,
} from '../../src/multicluster/wire/tunnel/index.js';
import { AGENT_MAC, ETHERTYPE_IPV4, GATEWAY_MAC, VXLAN_OVERHEAD, writeHeaders } from '../../src/multicluster/wire/vxlan/index.js';
import { native } from '../../src/platform/native/index.js';
import { prng } from '../helpers/prng.js';
import { waitFor } from '../helpers/wait.js';

const skip = (() => {
  try {
    return typeof native().tunnelPathStart === 'function' ? false : 'addon without the gateway data path';
  } catch {
    return 'no native addon';
  }
})();

// counter slots of gwpath.c
const C = {
  replay: 0,
  auth: 1,
  malformed: 2,
  fragment: 3,
  fragmentsSent: 5,
  fragmentsReceived: 6,
  reassembled: 7,
  fenced: 8,
  vxTx: 9,
  upTunnel: 11,
  upTun: 12,
  tunReads: 19,
  beats: 28,
  exited: 30,
};
const PEER0 = 31;
const LOCAL_INDEX = 0x1111;
const REMOTE_INDEX = 0x2222;
const MAX_DGRAM = 1472;
const LOOPBACK = 0x7f000001;

async function bind(onMessage: (m: Buffer, port: number) => void): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve));
  s.setRecvBufferSize(8 * 1024 * 1024);
  s.on('message', (m, r) => onMessage(Buffer.from(m), r.port));
  return s;
}

/** An IPv4 packet of `len` bytes from src to dst (the payload is random; checksums do not matter here). */
function ipv4(src: string, dst: string, len: number): Buffer {
  const b = randomBytes(len);
  b[0] = 0x45;
  b.writeUInt16BE(len, 2);
  src.split('.').forEach((o, i) => (b[12 + i] = Number(o)));
  dst.split('.').forEach((o, i) => (b[16 + i] = Number(o)));
  return b;
}

interface Harness {
  id: number;
  counters: Float64Array;
  ups: { kind: number; bytes: Buffer; port: number }[];
  toNode: Buffer[];
  fromPath: Buffer[];
  peer: Socket;
  node: Socket;
  udpPort: number;
  vxPort: number;
  tunW: number;
  keys: SessionKeys;
  session: number;
  close(): void;
}

async function harness(maxDatagram = MAX_DGRAM): Promise<Harness> {
  const n = native();
  const [udpFd, udpPort] = n.udpOpen('127.0.0.1', 0, 4 * 1024 * 1024);
  const [vxFd, vxPort] = n.udpOpen('127.0.0.1', 0, 4 * 1024 * 1024);
  const dir = mkdtempSync(join(tmpdir(), 'strait-gwpath-'));
  execFileSync('mkfifo', [join(dir, 'tun')]);
  const tunR = openSync(join(dir, 'tun'), constants.O_RDONLY | constants.O_NONBLOCK);
  const tunW = openSync(join(dir, 'tun'), constants.O_WRONLY);
  const toNode: Buffer[] = [];
  const fromPath: Buffer[] = [];
  const node = await bind((m) => toNode.push(m));
  const peer = await bind((m) => fromPath.push(m));
  const keys: SessionKeys = { send: randomBytes(32), recv: randomBytes(32), sendSalt: randomBytes(4), recvSalt: randomBytes(4) };
  const session = n.tunnelSessionNew(keys.send, keys.sendSalt, keys.recv, keys.recvSalt, 0);
  const counters = new Float64Array(111);
  const ups: Harness['ups'] = [];
  const vxhdr = Buffer.alloc(VXLAN_OVERHEAD);
  writeHeaders(vxhdr, 0, 100, AGENT_MAC, GATEWAY_MAC, ETHERTYPE_IPV4);
  const id = n.tunnelPathStart(
    udpFd,
    tunR,
    vxFd,
    vxhdr,
    node.address().port,
    maxDatagram,
    FEATURE_VNET | FEATURE_FRAG,
    2 ** 48,
    1000,
    counters,
    (kind, bytes, _addr, port) => ups.push({ kind, bytes, port }),
  );
  n.tunnelPathPeer(
    id,
    0,
    LOOPBACK,
    peer.address().port,
    FEATURE_VNET | FEATURE_FRAG,
    new Float64Array([0x0a020000, 0xffff0000]),
    session,
    REMOTE_INDEX,
    2 ** 32,
    60_000,
  );
  n.tunnelPathSession(id, session, 0, LOCAL_INDEX, true, 60_000);
  n.tunnelPathNodes(id, new Float64Array([0x0a010100, 0xffffff00, LOOPBACK]));
  return {
    id,
    counters,
    ups,
    toNode,
    fromPath,
    peer,
    node,
    udpPort,
    vxPort,
    tunW,
    keys,
    session,
    close() {
      assert.equal(n.tunnelPathStop(id), true);
      n.tunnelSessionCtl(session, 5, 0);
      n.udpClose(udpFd);
      n.udpClose(vxFd);
      closeSync(tunW);
      closeSync(tunR);
      rmSync(dir, { recursive: true, force: true });
      peer.close();
      node.close();
    },
  };
}

const mirror = (k: SessionKeys): SessionKeys => ({ send: k.recv, recv: k.send, sendSalt: k.recvSalt, recvSalt: k.sendSalt });

function sealed(s: Session, seq: number, next: number, payload: Buffer, spi = LOCAL_INDEX): { msg: Buffer; body: Buffer } {
  const h = Buffer.alloc(DATA_HEADER);
  writeDataHeader(h, 0, next, spi, seq);
  const [ct, tag] = s.seal(h, seq, payload);
  return { msg: Buffer.concat([h, ct, tag]), body: Buffer.concat([ct, tag]) };
}

/** TunnelEndpoint.sendFragments(): the sealed body in fragments of MAX_DGRAM bytes. */
function fragments(next: number, spi: number, seq: number, body: Buffer): Buffer[] {
  const size = MAX_DGRAM - FRAG_HEADER;
  const count = Math.ceil(body.length / size);
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const h = Buffer.alloc(FRAG_HEADER);
    writeFragmentHeader(h, 0, next, i, count, spi, seq, size);
    out.push(Buffer.concat([h, body.subarray(i * size, Math.min(body.length, (i + 1) * size))]));
  }
  return out;
}

test('native path, receive: the reference decisions for in-order, reordered, replayed, tampered, truncated, spoofed and control input', { skip }, async () => {
  const h = await harness();
  try {
    const tx = new Session(REMOTE_INDEX, LOCAL_INDEX, true, 0, mirror(h.keys));
    const ref = new Session(LOCAL_INDEX, REMOTE_INDEX, false, 0, h.keys);
    const r = prng(4800);
    // the wire: [bytes, expected outcome]; outcomes are decided by the reference as they are made
    type Outcome = { kind: 'node'; plain: Buffer } | { kind: 'drop'; reason: 'replay' | 'auth' | 'fragment' } | { kind: 'up' } | { kind: 'pending' };
    const wire: [Buffer, Outcome][] = [];
    const msgs: Buffer[] = [];
    let authenticated = 0;
    const decide = (m: Buffer): Outcome => {
      const seq = m.readUInt32BE(8) * 2 ** 32 + m.readUInt32BE(12);
      if (!ref.replay.check(seq)) return { kind: 'drop', reason: 'replay' };
      const plain = ref.open(m, seq);
      if (plain === undefined) return { kind: 'drop', reason: 'auth' };
      if (!ref.replay.update(seq)) return { kind: 'drop', reason: 'replay' };
      authenticated++;
      // Gateway.deliver(): the source must be one of the peer's subnets (10.2.0.0/16)
      if (plain[12] !== 10 || plain[13] !== 2) return { kind: 'drop', reason: 'auth' };
      return { kind: 'node', plain };
    };
    for (let i = 0; i < 400; i++) {
      const kind = r() % 12;
      const spoofed = kind === 0;
      const plain = ipv4(spoofed ? '10.9.0.1' : `10.2.${i % 250}.7`, `10.1.1.${1 + (i % 200)}`, 40 + (r() % 1300));
      const { msg } = sealed(tx, tx.takeSeq(), NEXT_IPV4, plain);
      msgs.push(msg);
      if (kind === 1 && i > 10) {
        // replay of an earlier message
        const old = msgs[r() % (msgs.length - 1)] as Buffer;
        wire.push([old, decide(old)]);
      } else if (kind === 2) {
        const t = Buffer.from(msg);
        const at = 16 + (r() % (t.length - 16));
        t[at] = (t[at] as number) ^ 0x40;
        wire.push([t, decide(t)]);
      } else if (kind === 3) {
        // truncated below a data message's minimum: TypeScript decides (malformed)
        wire.push([msg.subarray(0, 20), { kind: 'up' }]);
      } else if (kind === 4) {
        // a probe: control, up to TypeScript unopened
        const probe = sealed(tx, tx.takeSeq(), NEXT_PROBE, randomBytes(16)).msg;
        wire.push([probe, { kind: 'up' }]);
      } else if (kind === 5) {
        // an unknown session: TypeScript counts it stale
        wire.push([sealed(tx, tx.takeSeq(), NEXT_IPV4, plain, 0x9999).msg, { kind: 'up' }]);
      } else if (kind === 6) {
        // a large packet sealed once, in fragments, one of them duplicated and the set reordered
        const big = ipv4(`10.2.0.${i % 250}`, '10.1.1.9', 3000 + (r() % 2000));
        const seq = tx.takeSeq();
        const s = sealed(tx, seq, NEXT_IPV4, big);
        const frags = fragments(NEXT_IPV4, LOCAL_INDEX, seq, s.body);
        for (const f of frags) assert.equal(fragmentRule(f, 0, f.length), '');
        const order = frags.map((_f, j) => j).reverse();
        for (let j = 0; j < order.length; j++) {
          const f = frags[order[j] as number] as Buffer;
          wire.push([f, j < order.length - 1 ? { kind: 'pending' } : decide(s.msg)]);
          if (j === 0) wire.push([f, { kind: 'drop', reason: 'fragment' }]);
        }
      }
      if (kind !== 7) wire.push([msg, decide(msg)]);
    }
    // in order but one message sent twice in a row, and a reordered pair
    const a = sealed(tx, tx.takeSeq(), NEXT_IPV4, ipv4('10.2.0.1', '10.1.1.1', 100)).msg;
    const b = sealed(tx, tx.takeSeq(), NEXT_IPV4, ipv4('10.2.0.2', '10.1.1.2', 100)).msg;
    wire.push([b, decide(b)], [a, decide(a)], [a, decide(a)]);
    // the same message from another source port: TypeScript decides (roaming)
    const c = sealed(tx, tx.takeSeq(), NEXT_IPV4, ipv4('10.2.0.3', '10.1.1.3', 100)).msg;
    const other = await bind(() => undefined);
    for (const [m] of wire) await new Promise<void>((resolve) => h.peer.send(m, h.udpPort, '127.0.0.1', () => resolve()));
    await new Promise<void>((resolve) => other.send(c, h.udpPort, '127.0.0.1', () => resolve()));
    other.close();
    const want = (k: Outcome['kind']): Outcome[] => wire.map(([, o]) => o).filter((o) => o.kind === k);
    const drops = (why: string): number => want('drop').filter((o) => (o as { reason: string }).reason === why).length;
    const ups = want('up').length + 1;
    await waitFor(
      () => h.toNode.length >= want('node').length && h.ups.length >= ups,
      20_000,
      `${want('node').length} frames to the node and ${ups} datagrams up (got ${h.toNode.length}, ${h.ups.length})`,
    );
    // the node got exactly the accepted packets, in order, each after the VXLAN header
    const got = h.toNode.map((f) => f.subarray(VXLAN_OVERHEAD));
    const expect = want('node').map((o) => (o as { plain: Buffer }).plain);
    assert.equal(got.length, expect.length);
    for (let i = 0; i < expect.length; i++) assert.ok(got[i]?.equals(expect[i] as Buffer), `packet ${i} to the node differs`);
    assert.equal(h.counters[C.replay], drops('replay'), 'replay drops');
    assert.equal(h.counters[C.auth], drops('auth'), 'auth drops (tag or source)');
    assert.equal(h.counters[C.fragment], drops('fragment'), 'duplicate fragments');
    assert.equal(h.counters[C.vxTx], expect.length);
    assert.equal(h.counters[PEER0 + 4], authenticated, 'authenticated messages (the dead-peer timer input)');
    assert.equal(h.counters[PEER0], authenticated, 'rx packets: every authenticated data message, before the source check (as accept() counts)');
    // what went up is byte for byte what came in, the foreign port included
    const upWire = wire.filter(([, o]) => o.kind === 'up').map(([m]) => m);
    upWire.push(c);
    assert.equal(h.ups.length, upWire.length);
    for (let i = 0; i < upWire.length; i++) {
      assert.equal(h.ups[i]?.kind, 0);
      assert.ok(h.ups[i]?.bytes.equals(upWire[i] as Buffer), `datagram ${i} handed up differs`);
    }
    assert.equal(h.ups.at(-1)?.port !== h.peer.address().port, true);
    assert.ok(
      drops('replay') > 10 && drops('auth') > 10 && drops('fragment') > 5 && expect.length > 300,
      JSON.stringify({ r: drops('replay'), a: drops('auth') }),
    );
  } finally {
    h.close();
  }
});

test('native path, send: byte-identical frames to node:crypto for the same sequence numbers; no route goes up; the fence stops everything', {
  skip,
}, async () => {
  const h = await harness();
  try {
    const ref = new Session(LOCAL_INDEX, REMOTE_INDEX, true, 0, h.keys);
    const r = prng(1500);
    const expected: Buffer[] = [];
    let reads = 0;
    const read = async (b: Buffer): Promise<void> => {
      writeSync(h.tunW, b);
      reads++;
      await waitFor(() => h.counters[C.tunReads] === reads, 10_000, `TUN read ${reads}`, 1);
    };
    for (let i = 0; i < 60; i++) {
      const gso = i % 4 === 3;
      const pkt = ipv4('10.1.1.10', `10.2.${i}.10`, gso ? 2000 + (r() % 2000) : 40 + (r() % 1400));
      const vnet = Buffer.alloc(10);
      if (gso) {
        vnet[0] = 1;
        vnet[1] = 1;
      }
      const payload = gso ? Buffer.concat([vnet, pkt]) : pkt;
      const next = gso ? NEXT_IPV4_VNET : NEXT_IPV4;
      const seq = ref.takeSeq();
      const s = sealed(ref, seq, next, payload, REMOTE_INDEX);
      if (s.msg.length > MAX_DGRAM) expected.push(...fragments(next, REMOTE_INDEX, seq, s.body));
      else expected.push(s.msg);
      await read(Buffer.concat([vnet, pkt]));
    }
    // no route (10.3/16 is no peer's): up as read
    const lost = Buffer.concat([Buffer.alloc(10), ipv4('10.1.1.10', '10.3.0.1', 60)]);
    await read(lost);
    await waitFor(() => h.fromPath.length >= expected.length && h.ups.length >= 1, 10_000, `${expected.length} datagrams at the peer`);
    assert.equal(h.fromPath.length, expected.length);
    for (let i = 0; i < expected.length; i++) assert.ok(h.fromPath[i]?.equals(expected[i] as Buffer), `datagram ${i} differs from the reference`);
    assert.equal(h.ups[0]?.kind, 1);
    assert.ok(h.ups[0]?.bytes.equals(lost));
    assert.equal(h.counters[C.fragmentsSent], expected.filter((d) => d[0] === 5).length);
    assert.equal(native().tunnelSessionCtl(h.session, 4, 0), 60, 'the shared send counter moved once per packet');
    // HA fence: past the deadline nothing leaves, each datagram is counted
    native().tunnelPathFence(h.id, 0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await read(Buffer.concat([Buffer.alloc(10), ipv4('10.1.1.10', '10.2.0.1', 100)]));
    await read(Buffer.concat([Buffer.from([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]), ipv4('10.1.1.10', '10.2.0.1', 4000)]));
    assert.equal(h.counters[C.fenced], 1 + 3);
    native().tunnelPathFence(h.id, -1);
    await read(Buffer.concat([Buffer.alloc(10), ipv4('10.1.1.10', '10.2.0.1', 100)]));
    await waitFor(() => h.fromPath.length === expected.length + 1, 10_000, 'a datagram after the fence is lifted');
    assert.equal(h.fromPath.length, expected.length + 1);
  } finally {
    h.close();
  }
});

test('native path, fuzz: 20k random and mutated datagrams on the tunnel and VXLAN sockets: no crash, nothing forged delivered, a valid message still crosses', {
  skip,
}, async () => {
  const seed = Number(process.env['FUZZ_SEED'] ?? 0xf022);
  const r = prng(seed);
  const h = await harness();
  try {
    const tx = new Session(REMOTE_INDEX, LOCAL_INDEX, true, 0, mirror(h.keys));
    const pool: Buffer[] = [];
    const genuine = new Set<string>();
    for (let i = 0; i < 32; i++) {
      const seq = tx.takeSeq();
      const plain = ipv4('10.2.0.1', '10.1.1.1', 60 + (r() % 3000));
      genuine.add(plain.toString('hex'));
      const s = sealed(tx, seq, NEXT_IPV4, plain);
      pool.push(s.msg, ...fragments(NEXT_IPV4, LOCAL_INDEX, seq, s.body));
    }
    // VXLAN frames as an agent sends them: plain, virtio_net_hdr + packet, an extension fragment
    const vx = (et: number, body: Buffer): Buffer => {
      const f = Buffer.alloc(VXLAN_OVERHEAD);
      writeHeaders(f, 0, 100, GATEWAY_MAC, AGENT_MAC, et);
      return Buffer.concat([f, body]);
    };
    const ext = Buffer.alloc(12 + 100);
    ext[0] = 3;
    ext[2] = 2;
    ext.writeUInt32BE(77, 4);
    ext.writeUInt16BE(100, 8);
    const frames = [
      vx(ETHERTYPE_IPV4, ipv4('10.1.1.5', '10.2.0.9', 200)),
      vx(0x88b5, Buffer.concat([Buffer.alloc(10), ipv4('10.1.1.5', '10.2.0.9', 300)])),
      vx(0x88b6, ext),
    ];
    const send = (b: Buffer, port: number): Promise<void> => new Promise((resolve) => h.peer.send(b, port, '127.0.0.1', () => resolve()));
    for (let i = 0; i < 20_000; i++) {
      const toVxlan = i % 3 === 0;
      const from = toVxlan ? frames : pool;
      const base = from[r() % from.length] as Buffer;
      let m: Buffer;
      const op = r() % 4;
      if (op === 0) m = randomBytes(r() % 200);
      else if (op === 1) m = base.subarray(0, r() % base.length);
      else {
        m = Buffer.from(base);
        for (let f = 0; f < 1 + (r() % 3); f++) m[r() % m.length] = r() & 0xff;
      }
      await send(m, toVxlan ? h.vxPort : h.udpPort);
      if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // the thread is alive and still takes a valid message
    const last = ipv4('10.2.0.1', '10.1.1.1', 100);
    genuine.add(last.toString('hex'));
    await send(sealed(tx, tx.takeSeq(), NEXT_IPV4, last).msg, h.udpPort);
    await waitFor(() => h.toNode.some((f) => f.subarray(VXLAN_OVERHEAD).equals(last)), 20_000, 'a valid message after the fuzz');
    // whatever reached the node is a genuine packet (a mutated copy that happened to equal its original may cross once)
    for (const f of h.toNode) assert.ok(genuine.has(f.subarray(VXLAN_OVERHEAD).toString('hex')), `seed ${seed}: a forged packet reached the node`);
    assert.ok(h.ups.length > 1000, `seed ${seed}: ${h.ups.length} datagrams handed up`);
  } finally {
    h.close();
  }
});

test("native path, the agents' VXLAN: plain and extension-fragment frames sealed as the reference; spoofed sources dropped; hellos and strangers go up", {
  skip,
}, async () => {
  const h = await harness();
  try {
    const ref = new Session(LOCAL_INDEX, REMOTE_INDEX, true, 0, h.keys);
    const vx = (et: number, body: Buffer): Buffer => {
      const f = Buffer.alloc(VXLAN_OVERHEAD);
      writeHeaders(f, 0, 100, GATEWAY_MAC, AGENT_MAC, et);
      return Buffer.concat([f, body]);
    };
    const send = (s: Socket, b: Buffer): Promise<void> => new Promise((resolve) => s.send(b, h.vxPort, '127.0.0.1', () => resolve()));
    const expected: Buffer[] = [];
    // a plain frame: next header 0, one datagram
    const plain = ipv4('10.1.1.5', '10.2.0.9', 700);
    expected.push(sealed(ref, ref.takeSeq(), NEXT_IPV4, plain, REMOTE_INDEX).msg);
    await send(h.peer, vx(ETHERTYPE_IPV4, plain));
    // a super-packet in three extension fragments (indexes out of order): next header 3, tunnel fragments
    const sp = Buffer.concat([Buffer.from([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]), ipv4('10.1.1.6', '10.2.0.9', 3000)]);
    const seq = ref.takeSeq();
    const s = sealed(ref, seq, NEXT_IPV4_VNET, sp, REMOTE_INDEX);
    expected.push(...fragments(NEXT_IPV4_VNET, REMOTE_INDEX, seq, s.body));
    const size = 1400;
    const count = Math.ceil(sp.length / size);
    for (const i of [2, 0, 1]) {
      const e = Buffer.alloc(12);
      e[0] = 3;
      e[1] = i;
      e[2] = count;
      e.writeUInt32BE(41, 4);
      e.writeUInt16BE(size, 8);
      await send(h.peer, vx(0x88b6, Buffer.concat([e, sp.subarray(i * size, Math.min(sp.length, (i + 1) * size))])));
    }
    // a pod of this node claiming another node's address: dropped, counted
    await send(h.peer, vx(ETHERTYPE_IPV4, ipv4('10.1.9.9', '10.2.0.9', 100)));
    // a hello (answered by TypeScript) and a frame from an address that is no node: up as they came
    const hello = Buffer.alloc(12);
    hello[0] = 1;
    await send(h.peer, vx(0x88b6, hello));
    const stranger = createSocket('udp4');
    await new Promise<void>((resolve) => stranger.bind(0, '127.0.0.2', resolve));
    const strange = vx(ETHERTYPE_IPV4, ipv4('10.1.1.7', '10.2.0.9', 100));
    await send(stranger, strange);
    stranger.close();
    await waitFor(() => h.fromPath.length >= expected.length && h.ups.length >= 2, 10_000, `${expected.length} datagrams and 2 hand-ups`);
    assert.equal(h.fromPath.length, expected.length);
    for (let i = 0; i < expected.length; i++) assert.ok(h.fromPath[i]?.equals(expected[i] as Buffer), `datagram ${i} differs from the reference`);
    assert.equal(h.counters[21], 1, 'spoofed_source');
    assert.equal(h.counters[22], 3, 'VXLAN rx packets: the plain frame, the super-packet, the spoofed frame');
    assert.equal(h.counters[24], 3, 'extension fragments');
    assert.equal(h.counters[25], 1, 'super-packets reassembled');
    assert.deepEqual(
      h.ups.map((u) => u.kind),
      [2, 2],
    );
    assert.equal(h.ups[0]?.bytes.subarray(VXLAN_OVERHEAD)[0], 1, 'the hello');
    assert.ok(h.ups[1]?.bytes.equals(strange));
  } finally {
    h.close();
  }
});

test('native path, send: a super-packet that would need more than 64 fragments (a small tunnel MTU) is not sealed there: it goes up as read, nothing is sent', {
  skip,
}, async () => {
  // 200-byte datagrams: a 30 KB super-packet would be ~170 fragments (the thread has room for 64)
  const h = await harness(200);
  try {
    const big = Buffer.concat([Buffer.from([1, 1, 0, 0, 0, 0, 0, 0, 0, 0]), ipv4('10.1.1.10', '10.2.0.1', 30_000)]);
    writeSync(h.tunW, big);
    await waitFor(() => h.ups.length >= 1, 10_000, 'the super-packet up to the JS path', 1);
    assert.equal(h.ups[0]?.kind, 1);
    assert.ok(h.ups[0]?.bytes.equals(big), 'up as read');
    assert.equal(native().tunnelSessionCtl(h.session, 4, 0), 0, 'no sequence number taken');
    // a packet that fits still crosses
    writeSync(h.tunW, Buffer.concat([Buffer.alloc(10), ipv4('10.1.1.10', '10.2.0.1', 100)]));
    await waitFor(() => h.fromPath.length === 1, 10_000, 'a small packet sealed and sent');
    assert.equal(h.counters[C.fragmentsSent], 0);
  } finally {
    h.close();
  }
});

test('native path, heartbeat: the loop beats every 100 ms while it runs; a thread that ends by itself says its errno, a stalled one stops beating; both stop cleanly', {
  skip,
}, async () => {
  for (const kind of [1, 2] as const) {
    const h = await harness();
    try {
      await waitFor(() => (h.counters[C.beats] as number) >= 3, 2000, 'beats');
      native().tunnelPathFault(h.id, kind);
      await new Promise((r) => setTimeout(r, 300));
      const at = h.counters[C.beats] as number;
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(h.counters[C.beats], at, `kind ${kind}: no beat once the thread ${kind === 1 ? 'ended' : 'stalled'}`);
      assert.equal(h.counters[C.exited], kind === 1 ? 9 : 0, kind === 1 ? 'EBADF, as a poll error would say' : 'a stalled thread has not ended');
    } finally {
      h.close(); // joins the thread: it returns (ended, or the stall ends at the stop signal)
    }
  }
  // and one left alone keeps beating, with no exit recorded
  const h = await harness();
  try {
    const a = h.counters[C.beats] as number;
    await new Promise((r) => setTimeout(r, 500));
    assert.ok((h.counters[C.beats] as number) - a >= 3, `beats in 500 ms: ${(h.counters[C.beats] as number) - a}`);
    assert.equal(h.counters[C.exited], 0);
  } finally {
    h.close();
  }
});
