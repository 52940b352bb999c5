// The node agent's native TUN -> VXLAN pump (docs/gateway-and-agent.md) (native/src/pump.c). The pump reads a
// FIFO here in place of the TUN device (it only read()s its descriptor), so the test needs
// no namespace: fake gateways on loopback answer the hello and capture every datagram.
//   - frames are byte-identical to the JS path (fromNode) for the same reads;
//   - garbage from the device side is counted and survived;
//   - an HA announcement stops the pump, and the new gateway's hello-ack restarts it there;
//   - closing the UDP transport stops a pump sending on it; a failing start is retried.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { NodeAgent, parseNodeAgentConfig } from '../../src/multicluster/dataplane/node-agent/index.js';
import { UdpTransport } from '../../src/multicluster/dataplane/udp/index.js';
import { native } from '../../src/platform/native/index.js';
import {
  encodeAnnounce,
  writeHeaders,
  writeExtHeader,
  VXLAN_OVERHEAD,
  ETHERTYPE_STRAIT,
  AGENT_MAC,
  GATEWAY_MAC,
  EXT_HEADER,
  EXT_HELLO,
  EXT_HELLO_ACK,
  EXT_FEATURE_FRAGMENTS,
} from '../../src/multicluster/wire/vxlan/index.js';
import { waitFor } from '../helpers/wait.js';

const skip = (() => {
  try {
    return typeof native().pumpStart === 'function' ? false : 'addon without the pump';
  } catch {
    return 'no native addon';
  }
})();

/** A fake strait gateway: answers hellos (while `ack`) and keeps every other datagram. */
class FakeGateway {
  readonly got: Buffer[] = [];
  ack = true;
  hellos = 0;
  private constructor(
    readonly sock: Socket,
    readonly address: string,
    readonly port: number,
  ) {}
  static async bind(address: string, port: number): Promise<FakeGateway> {
    const s = createSocket('udp4');
    s.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.bind(port, address, () => resolve());
    });
    s.setRecvBufferSize(8 * 1024 * 1024);
    const g = new FakeGateway(s, address, s.address().port);
    s.on('message', (m, r) => {
      if (m.length === VXLAN_OVERHEAD + EXT_HEADER && m.readUInt16BE(20) === ETHERTYPE_STRAIT && m[VXLAN_OVERHEAD] === EXT_HELLO) {
        g.hellos++;
        if (!g.ack) return;
        const out = Buffer.alloc(VXLAN_OVERHEAD + EXT_HEADER);
        writeHeaders(out, 0, 100, AGENT_MAC, GATEWAY_MAC, ETHERTYPE_STRAIT);
        writeExtHeader(out, VXLAN_OVERHEAD, EXT_HELLO_ACK, 0, 0, EXT_FEATURE_FRAGMENTS, m.readUInt32BE(VXLAN_OVERHEAD + 4), 0);
        s.send(out, r.port, r.address);
        return;
      }
      g.got.push(Buffer.from(m));
    });
    return g;
  }
  send(buf: Buffer, port: number, address: string): void {
    this.sock.send(buf, port, address);
  }
  close(): void {
    this.sock.close();
  }
}

/** A FIFO standing in for the TUN device: the pump reads `fd`, the test writes `wfd`. */
function fifo(): { fd: number; wfd: number; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'strait-pump-'));
  const path = join(dir, 'tun');
  execFileSync('mkfifo', [path]);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const wfd = openSync(path, constants.O_WRONLY);
  return {
    fd,
    wfd,
    close: () => {
      closeSync(wfd);
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An agent wired to `gw` with `tunFd` as its device (not started: no TUN, no routes). */
async function agentFor(gw: FakeGateway, tunFd: number, standby: string[] = []): Promise<NodeAgent> {
  const a = new NodeAgent(
    parseNodeAgentConfig({
      remoteSubnets: ['10.77.0.0/16'],
      gateway: { address: gw.address, port: gw.port, standby },
      vxlan: { listen: '127.0.0.1', port: 0 },
    }),
  );
  const inner = a as unknown as Record<string, unknown>;
  const sock = await UdpTransport.bind('127.0.0.1', 0, (m, addr, p) => (inner['fromGateway'] as (m: Buffer, a: string, p: number) => void).call(a, m, addr, p));
  inner['sock'] = sock;
  inner['tun'] = { fd: tunFd, close: () => undefined };
  return a;
}

function hello(a: NodeAgent): void {
  ((a as unknown as Record<string, () => void>)['hello'] as () => void).call(a);
}

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 4294967296;
  };
}

/** Reads as the TUN device would hand them over: virtio_net_hdr + IPv4 packet (and some broken ones). */
function reads(): Buffer[] {
  const r = rng(3);
  const out: Buffer[] = [];
  const packet = (vnetGso: boolean, len: number, version = 4): Buffer => {
    const b = Buffer.alloc(10 + len);
    for (let i = 10; i < b.length; i++) b[i] = (r() * 256) | 0;
    if (vnetGso) {
      b[0] = 1; // NEEDS_CSUM
      b[1] = 1; // GSO TCPV4
      b.writeUInt16LE(52, 2);
      b.writeUInt16LE(1348, 4);
      b.writeUInt16LE(20, 6);
      b.writeUInt16LE(16, 8);
    }
    b[10] = (version << 4) | 5;
    return b;
  };
  for (const len of [20, 40, 576, 1400, 1500]) out.push(packet(false, len));
  for (const len of [100, 1200, 1440]) out.push(packet(true, len)); // one VNET frame
  for (const len of [1441, 2876, 30000, 64000]) out.push(packet(true, len)); // fragments
  out.push(Buffer.alloc(5)); // shorter than a virtio_net_hdr
  out.push(packet(false, 19)); // shorter than an IPv4 header
  out.push(packet(false, 60, 6)); // not IPv4
  out.push(packet(true, 100, 6));
  out.push(packet(true, 5));
  for (let i = 0; i < 20; i++) out.push(packet(r() < 0.5, 20 + ((r() * 60000) | 0)));
  return out;
}

const snapshot = (a: NodeAgent): string => JSON.stringify({ ...a.counters.totals(), pumpReads: 0 });

/** A fake gateway, a FIFO standing in for the TUN device and an agent on both; all stopped after `fn`. */
async function withPumpAgent(fn: (gw: FakeGateway, f: ReturnType<typeof fifo>, a: NodeAgent) => Promise<void>): Promise<void> {
  const gw = await FakeGateway.bind('127.0.0.2', 0);
  const f = fifo();
  const a = await agentFor(gw, f.fd);
  try {
    await fn(gw, f, a);
  } finally {
    await a.stop();
    f.close();
    gw.close();
  }
}

test('agent pump: frames are byte-identical to the JS path for the same reads, counters agree', { skip }, async () => {
  const input = reads();
  // JS path
  const gj = await FakeGateway.bind('127.0.0.2', 0);
  const js = await agentFor(gj, -1);
  (js as unknown as Record<string, unknown>)['pumpEnabled'] = false;
  (js as unknown as Record<string, unknown>)['gatewayFragments'] = true;
  const fromNode = (js as unknown as Record<string, (b: Buffer, o: number, l: number) => void>)['fromNode'] as (b: Buffer, o: number, l: number) => void;
  for (const b of input) {
    fromNode.call(js, b, 0, b.length);
    await new Promise((resolve) => setImmediate(resolve)); // the transport sends at the end of the turn
  }
  await settled(() => gj.got.length);
  // native pump
  const gp = await FakeGateway.bind('127.0.0.2', 0);
  const f = fifo();
  const pumped = await agentFor(gp, f.fd);
  try {
    hello(pumped);
    await waitFor(() => pumped.pumping, 5000, 'the pump to start after the hello-ack');
    for (let i = 0; i < input.length; i++) {
      writeSync(f.wfd, input[i] as Buffer);
      // one read per write (a FIFO does not keep message boundaries on its own)
      await waitFor(() => pumped.counters.totals().pumpReads === i + 1, 5000, `pump read ${i}`, 1);
    }
    await waitFor(() => gp.got.length >= gj.got.length, 5000, 'pumped frames');
    assert.equal(gp.got.length, gj.got.length);
    assert.ok(gj.got.length > 100, `${gj.got.length} datagrams`);
    for (let i = 0; i < gj.got.length; i++) assert.ok((gj.got[i] as Buffer).equals(gp.got[i] as Buffer), `datagram ${i} differs`);
    assert.equal(snapshot(pumped), snapshot(js));
    assert.equal(pumped.counters.totals().drops.malformed, 5);
    assert.equal(pumped.counters.totals().pumpSendErrors, 0);
    // the status page's JSON shows the same sums
    assert.equal(JSON.stringify(pumped.counters), JSON.stringify(pumped.counters.totals()));
  } finally {
    await pumped.stop();
    await js.stop();
    f.close();
    gj.close();
    gp.close();
  }
});

/** Wait until `n()` is positive and stayed the same for 200 ms (nothing more on the way). */
async function settled(n: () => number): Promise<void> {
  let last = -1;
  let same = 0;
  await waitFor(
    () => {
      const v = n();
      same = v === last && v > 0 ? same + 1 : 0;
      last = v;
      return same >= 4;
    },
    10_000,
    'datagrams to settle',
    50,
  );
}

test('agent pump: garbage from the device side is counted and survived; a valid packet still leaves', { skip }, () =>
  withPumpAgent(async (gw, f, a) => {
    hello(a);
    await waitFor(() => a.pumping, 5000, 'the pump to start');
    const r = rng(7);
    // 20k random and mutated chunks, written without waiting (reads merge and split them)
    let written = 0;
    const valid = Buffer.alloc(10 + 1400);
    valid[10] = 0x45;
    for (let i = 0; i < 20_000; i++) {
      const len = 1 + ((r() * (r() < 0.02 ? 65000 : 200)) | 0);
      const b = r() < 0.5 ? Buffer.alloc(len) : Buffer.from(valid.subarray(0, Math.min(len, valid.length)));
      for (let j = 0; j < 4; j++) b[(r() * b.length) | 0] = (r() * 256) | 0;
      if (len > 2000) b[0] = 1; // mostly a GSO header: fragments of garbage
      let off = 0;
      while (off < b.length) off += writeSync(f.wfd, b, off);
      written += b.length;
      if (i % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    // every byte written has been read (slot 7 of the pump's counters: bytes read)
    await waitFor(() => a.counters.pump[7] === written, 10_000, 'the pump to drain the garbage');
    await settled(() => gw.got.length + 1); // and what it sent has arrived
    assert.ok(a.pumping);
    const before = gw.got.length;
    writeSync(f.wfd, valid);
    await waitFor(() => gw.got.length === before + 1, 5000, 'the valid packet after the garbage');
    const frame = gw.got[before] as Buffer;
    assert.equal(frame.length, VXLAN_OVERHEAD + 1400);
    assert.ok(frame.subarray(VXLAN_OVERHEAD).equals(valid.subarray(10)));
  }),
);

test("agent pump: an HA announcement stops it; the new gateway's hello-ack restarts it towards that gateway", { skip }, async () => {
  const g1 = await FakeGateway.bind('127.0.0.2', 0);
  const g2 = await FakeGateway.bind('127.0.0.3', g1.port);
  const f = fifo();
  const a = await agentFor(g1, f.fd, ['127.0.0.3']);
  try {
    hello(a);
    await waitFor(() => a.pumping, 5000, 'the pump to start');
    const pkt = Buffer.alloc(10 + 30000);
    pkt[0] = 1;
    pkt[1] = 1;
    pkt[10] = 0x45;
    const count = Math.ceil(pkt.length / (1500 - 28 - VXLAN_OVERHEAD - EXT_HEADER));
    writeSync(f.wfd, pkt);
    await waitFor(() => g1.got.length === count, 5000, 'fragments at gateway 1');
    // gateway 2 takes the lease, but does not answer hellos yet: the pump stops
    g2.ack = false;
    g2.send(encodeAnnounce(100, 7), a.vxlanPort, '127.0.0.1');
    await waitFor(() => a.gateway === '127.0.0.3', 5000, 'the switch to gateway 2');
    assert.equal(a.pumping, false);
    assert.equal(a.counters.gatewaySwitches, 1);
    await waitFor(() => g2.hellos >= 1, 5000, 'a hello to gateway 2');
    g2.ack = true;
    hello(a);
    await waitFor(() => a.pumping, 5000, 'the pump to restart');
    writeSync(f.wfd, pkt);
    await waitFor(() => g2.got.length === count, 5000, 'fragments at gateway 2');
    assert.equal(g1.got.length, count);
    // message ids continue across the restart (the gateway reassembles by id)
    assert.equal((g2.got[0] as Buffer).readUInt32BE(VXLAN_OVERHEAD + 4), (g1.got[0] as Buffer).readUInt32BE(VXLAN_OVERHEAD + 4) + 1);
    assert.equal(a.counters.totals().superPackets, 2);
  } finally {
    await a.stop();
    assert.equal(a.pumping, false);
    f.close();
    g1.close();
    g2.close();
  }
});

test('agent pump: closing the UDP transport under it stops the pump; the agent still stops cleanly', { skip }, () =>
  withPumpAgent(async (_gw, f, a) => {
    hello(a);
    await waitFor(() => a.pumping, 5000, 'the pump to start');
    const pkt = Buffer.alloc(10 + 30000);
    pkt[0] = 1;
    pkt[1] = 1;
    pkt[10] = 0x45;
    for (let i = 0; i < 10; i++) writeSync(f.wfd, pkt); // the pump is busy sending when the socket closes
    await ((a as unknown as Record<string, unknown>)['sock'] as UdpTransport).close();
    // the pump no longer reads the device (it would send on a closed, possibly reused
    // descriptor): empty the FIFO here, write one more packet, and it stays unread
    const sink = Buffer.alloc(65536);
    for (;;) {
      try {
        if (readSync(f.fd, sink) <= 0) break;
      } catch {
        break; // EAGAIN: empty
      }
    }
    const reads = a.counters.pump[6] as number;
    writeSync(f.wfd, pkt.subarray(0, 110));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(a.counters.pump[6], reads);
    assert.equal(readSync(f.fd, sink), 110);
    await a.stop();
    assert.equal(a.pumping, false);
  }),
);

test('agent pump: a start that fails (EBUSY) is reported and retried at the next hello-ack', { skip }, () =>
  withPumpAgent(async (_gw, f, a) => {
    const other = await UdpTransport.bind('127.0.0.1', 0, () => undefined);
    const errors: unknown[] = [];
    a.onPumpError = (err) => errors.push(err);
    const hdr = Buffer.alloc(VXLAN_OVERHEAD);
    try {
      // someone else pumps this device: the agent's start fails with EBUSY
      native().pumpStart(f.fd, other.nativeFd, hdr, hdr, hdr, 1000, 1200, 0x7f000001, 9, 0, new Float64Array(8));
      hello(a);
      await waitFor(() => errors.length >= 1, 5000, 'the failed start to be reported');
      assert.match(String(errors[0]), /pumped already/);
      assert.equal(a.pumping, false);
      native().pumpStop(f.fd);
      // the periodic hello (every 500 ms) may have retried once more before the stop: at most one failure per answer
      const failed = errors.length;
      hello(a);
      await waitFor(() => a.pumping, 5000, 'the pump to start at the next hello-ack');
      assert.equal(errors.length, failed, 'no failure once the device is free');
    } finally {
      native().pumpStop(f.fd);
      await other.close();
    }
  }),
);
