// Fuzz every decoder: random and mutated inputs must decode or throw StraitError
// (STRAIT_ERR_TUNNEL_MALFORMED), never anything else. Deterministic PRNG, bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import {
  vxlan,
  ext,
  writeHeaders,
  writeExtHeader,
  ETHERTYPE_STRAIT,
  EXT_FRAGMENT,
  VXLAN_OVERHEAD,
  EXT_HEADER,
} from '../../src/multicluster/wire/vxlan/index.js';
import { ipv4, udp } from '../../src/multicluster/wire/ipv4/index.js';
import {
  handshakeInit,
  handshakeResponse,
  cookieReply,
  dataPacket,
  initPayload,
  responsePayload,
  fragment,
  vnetHeader,
  segmentVnet,
  FEATURE_FRAG,
  FEATURE_VNET,
  NEXT_IPV4_VNET,
  VNET_F_NEEDS_CSUM,
  VNET_GSO_TCPV4,
} from '../../src/multicluster/wire/tunnel/index.js';
import { Reassembler } from '../../src/multicluster/dataplane/tunnel/index.js';
import { computeVectors } from '../helpers/vectors.js';
import { tunnelPair } from '../helpers/tunnel-pair.js';
import { prng } from '../helpers/prng.js';

const v = computeVectors();
const seeds: Buffer[] = [
  Buffer.from(v['initiation']!, 'hex'),
  Buffer.from(v['response']!, 'hex'),
  Buffer.from(v['dataPacket']!, 'hex'),
  vxlan.encode({ vni: 1, dst: Buffer.alloc(6), src: Buffer.alloc(6), etherType: 0x800, payload: Buffer.alloc(40) }),
  ipv4.encode({
    tos: 0,
    id: 0,
    flags: 0,
    fragmentOffset: 0,
    ttl: 1,
    protocol: 17,
    src: 1,
    dst: 2,
    payload: udp.encode({ srcPort: 1, dstPort: 2, payload: Buffer.alloc(9) }),
  }),
  Buffer.from(v['fragment0']!, 'hex').subarray(0, 150),
  Buffer.from(v['fragment2']!, 'hex'),
  ext.encode({ kind: EXT_FRAGMENT, index: 1, count: 2, features: 0, id: 9, size: 64, data: Buffer.alloc(30) }),
  ext.encode({ kind: 1, index: 0, count: 0, features: 0, id: 1, size: 0, data: Buffer.alloc(0) }),
  superPacketSeed(),
];

/** virtio_net_hdr (TCPv4 GSO, MSS 40) + IPv4 + TCP + 100 bytes */
function superPacketSeed(): Buffer {
  const ip = Buffer.alloc(140);
  ip[0] = 0x45;
  ip.writeUInt16BE(140, 2);
  ip[9] = 6;
  ip[32] = 5 << 4;
  return Buffer.concat([vnetHeader.encode({ flags: VNET_F_NEEDS_CSUM, gsoType: VNET_GSO_TCPV4, hdrLen: 40, gsoSize: 40, csumStart: 20, csumOffset: 16 }), ip]);
}

const scratch = Buffer.alloc(65536);
const noSink = { segment(): void {} };

const decoders: [string, (b: Buffer, off: number) => unknown][] = [
  ['vxlan', vxlan.decode],
  ['ipv4', ipv4.decode],
  ['udp', (b, o) => udp.decode(b, o, { src: 1, dst: 2 })],
  ['handshakeInit', handshakeInit.decode],
  ['handshakeResponse', handshakeResponse.decode],
  ['cookieReply', cookieReply.decode],
  ['dataPacket', dataPacket.decode],
  ['initPayload', initPayload.decode],
  ['responsePayload', responsePayload.decode],
  ['fragment', fragment.decode],
  ['vxlanExt', ext.decode],
  ['vnetHeader', vnetHeader.decode],
  ['segmentVnet', (b, o) => segmentVnet(b, o, b.length - o, scratch, noSink)],
];

for (const [name, decode] of decoders) {
  test(`fuzz ${name}: 20k random and mutated inputs, only StraitError`, () => {
    const rnd = prng(0x5eed ^ (name.length * 7919));
    let ok = 0;
    for (let i = 0; i < 20_000; i++) {
      let b: Buffer;
      if (i % 2 === 0) {
        b = Buffer.alloc(rnd() % 160);
        for (let j = 0; j < b.length; j++) b[j] = rnd() & 255;
      } else {
        const s = seeds[rnd() % seeds.length]!;
        b = Buffer.from(s.subarray(0, rnd() % (s.length + 1)));
        for (let k = rnd() % 4; k >= 0 && b.length; k--) b[rnd() % b.length] = rnd() & 255;
      }
      const off = i % 5 === 0 ? rnd() % 8 : 0;
      try {
        decode(b, off);
        ok++;
      } catch (err) {
        assert.ok(isStraitError(err, 'STRAIT_ERR_TUNNEL_MALFORMED'), `${name} threw ${String(err)} on ${b.toString('hex')} at ${off}`);
      }
    }
    assert.ok(ok >= 0);
  });
}

test('fuzz tunnel reassembly: 20k random and mutated fragments into a live endpoint, bounded memory, tunnel still works', () => {
  const p = tunnelPair({ featuresA: FEATURE_VNET | FEATURE_FRAG, featuresB: FEATURE_VNET | FEATURE_FRAG, maxDatagram: 1472, limits: { reassemblySlots: 4 } });
  p.a.start();
  p.b.start();
  p.clock.advance(300);
  const peer = p.a.peer('cluster-b')!;
  // real fragments to mutate: the SPI and sequence numbers are live
  const start = p.wire.length;
  p.link.filter = (d) => d.from !== 'a';
  for (let i = 0; i < 4; i++) p.a.sendPacket(peer, Buffer.alloc(9000, i), NEXT_IPV4_VNET);
  p.link.filter = undefined;
  const real = p.wire.slice(start).map((d) => d.bytes);
  const rnd = prng(0xf4a9);
  for (let i = 0; i < 20_000; i++) {
    const b = Buffer.from(real[rnd() % real.length]!);
    const k = rnd() % 4;
    if (k === 0)
      b[rnd() % 20] = rnd() & 255; // header byte
    else if (k === 1)
      b[20 + (rnd() % (b.length - 20))] = rnd() & 255; // data byte
    else if (k === 2) b.writeUInt32BE(rnd() % 1000, 12); // another message
    p.inject('b', k === 3 ? b.subarray(0, rnd() % b.length) : b);
    if (i % 1000 === 0) p.clock.advance(50);
  }
  const r = p.b.peer('cluster-a')!.reassembly!;
  assert.ok(r.allocatedBytes <= 4 * r.headroom + 4 * r.maxBody);
  for (const d of p.deliveredB) assert.ok(d.length === 9000 && d.every((x) => x === d[0]), 'only real messages are delivered');
  const n = p.deliveredB.length;
  p.a.sendPacket(peer, Buffer.alloc(20_000, 9), NEXT_IPV4_VNET);
  assert.equal(p.deliveredB.length, n + 1);
});

test('fuzz VXLAN reassembly bookkeeping: random fragment headers never exceed the slots', () => {
  const r = new Reassembler(8, 65600, 0, 1000);
  const rnd = prng(0xbeef);
  const f = Buffer.alloc(VXLAN_OVERHEAD + EXT_HEADER + 1500);
  writeHeaders(f, 0, 1, Buffer.alloc(6), Buffer.alloc(6), ETHERTYPE_STRAIT);
  for (let i = 0; i < 20_000; i++) {
    const count = 2 + (rnd() % 63);
    const size = 64 + (rnd() % 1400);
    const index = rnd() % count;
    writeExtHeader(f, VXLAN_OVERHEAD, EXT_FRAGMENT, index, count, 0, rnd() % 50, size);
    const len = index === count - 1 ? 1 + (rnd() % size) : size;
    if ((count - 1) * size >= 65600) continue;
    r.add(1, f.readUInt32BE(VXLAN_OVERHEAD + 4), index, count, size, f, VXLAN_OVERHEAD + EXT_HEADER, len, i);
  }
  assert.ok(r.pending <= 8);
  assert.ok(r.allocatedBytes <= 8 * 65600);
});
