// Software segmentation (docs/gateway-and-agent.md) of TUN super-packets for peers that take
// plain packets only (older gateways, a kernel vxlan device). Every segment must be a
// valid IPv4/TCP packet a receiver accepts: checksums, lengths, IDs, sequence numbers, flags.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onesSum } from '../../src/multicluster/wire/ipv4/index.js';
import { segmentVnet, vnetHeader, VNET_F_NEEDS_CSUM, VNET_GSO_NONE, VNET_HDR_LEN, type SegmentSink } from '../../src/multicluster/wire/tunnel/index.js';
import { isStraitError } from '../../src/base/errors/index.js';
import { superPacket } from '../helpers/super-packet.js';

function collect(): SegmentSink & { out: Buffer[] } {
  const out: Buffer[] = [];
  return { out, segment: (b, o, l) => out.push(Buffer.from(b.subarray(o, o + l))) };
}

function pseudo(p: Buffer, proto: number, l4len: number): number {
  return onesSum(p, 12, 8, proto + l4len);
}

test('a TCP super-packet becomes MSS-sized segments with valid checksums, IDs, sequence numbers and flags', () => {
  const cases: [string, number, number, number][] = [
    ['payload a multiple of the MSS', 1348 * 4, 1348, 0x18],
    ['short last segment, FIN+PSH only on the last, CWR only on the first', 5000, 1348, 0x80 | 0x18 | 0x01],
    ['60 KB, 45 segments', 60_000, 1348, 0x10],
    ['one segment', 100, 1348, 0x18],
  ];
  for (const [name, n, mss, flags] of cases) {
    const { pkt, payload } = superPacket(n, mss, flags);
    const sink = collect();
    const count = segmentVnet(pkt, 0, pkt.length, Buffer.alloc(65536), sink);
    assert.equal(count, Math.ceil(n / mss), name);
    assert.equal(sink.out.length, count);
    const joined: Buffer[] = [];
    sink.out.forEach((s, i) => {
      const dLen = s.length - 52;
      assert.equal(s.readUInt16BE(2), s.length, `${name}: IP total length`);
      assert.equal(onesSum(s, 0, 20), 0xffff, `${name}: IP header checksum of segment ${i}`);
      assert.equal(s.readUInt16BE(4), (0xfff0 + i) & 0xffff, `${name}: IP ID`);
      assert.equal(s.readUInt32BE(24), (0xfffff000 + i * mss) >>> 0, `${name}: sequence`);
      assert.equal(onesSum(s, 20, s.length - 20, pseudo(s, 6, s.length - 20)), 0xffff, `${name}: TCP checksum of segment ${i}`);
      const last = i === count - 1;
      assert.equal(s[33], flags & ~(last ? 0 : 0x09) & ~(i > 0 ? 0x80 : 0), `${name}: flags of segment ${i}`);
      assert.ok(dLen <= mss);
      assert.deepEqual(s.subarray(40, 52), pkt.subarray(VNET_HDR_LEN + 40, VNET_HDR_LEN + 52), 'options copied');
      joined.push(s.subarray(52));
    });
    assert.ok(Buffer.concat(joined).equals(payload), `${name}: payload`);
  }
});

test('a plain packet with NEEDS_CSUM gets its checksum completed (UDP and TCP)', () => {
  for (const proto of [17, 6]) {
    const l4 = proto === 17 ? 8 + 33 : 20 + 33;
    const p = Buffer.alloc(20 + l4);
    p[0] = 0x45;
    p.writeUInt16BE(p.length, 2);
    p[8] = 64;
    p[9] = proto;
    Buffer.from([10, 1, 1, 10, 10, 2, 1, 10]).copy(p, 12);
    p.writeUInt16BE(0xffff & ~onesSum(p, 0, 20), 10);
    for (let i = 20; i < p.length; i++) p[i] = i * 13;
    const field = proto === 17 ? 6 : 16;
    if (proto === 17) p.writeUInt16BE(l4, 24);
    else p[32] = 5 << 4;
    // the kernel leaves the pseudo-header sum in the field
    p.writeUInt16BE(pseudo(p, proto, l4), 20 + field);
    const hdr = vnetHeader.encode({ flags: VNET_F_NEEDS_CSUM, gsoType: VNET_GSO_NONE, hdrLen: 0, gsoSize: 0, csumStart: 20, csumOffset: field });
    const sink = collect();
    assert.equal(segmentVnet(Buffer.concat([hdr, p]), 0, VNET_HDR_LEN + p.length, Buffer.alloc(65536), sink), 1);
    const s = sink.out[0]!;
    assert.equal(onesSum(s, 20, l4, pseudo(s, proto, l4)), 0xffff, `protocol ${proto}`);
  }
});

test('headers segmentVnet cannot honour are StraitErrors (never a crash)', () => {
  const { pkt } = superPacket(3000, 1348, 0x10);
  const bad: [string, (b: Buffer) => Buffer][] = [
    [
      'IPv6 GSO type',
      (b) => {
        b[1] = 4;
        return b;
      },
    ],
    [
      'UDP inside',
      (b) => {
        b[VNET_HDR_LEN + 9] = 17;
        return b;
      },
    ],
    [
      'zero MSS',
      (b) => {
        b.writeUInt16LE(0, 4);
        return b;
      },
    ],
    [
      'not IPv4',
      (b) => {
        b[VNET_HDR_LEN] = 0x65;
        return b;
      },
    ],
    ['TCP header longer than the packet', (b) => b.subarray(0, VNET_HDR_LEN + 30)],
    [
      'checksum offset outside',
      (b) => {
        b[1] = 0;
        b.writeUInt16LE(60_000, 8);
        return b;
      },
    ],
    ['too short', (b) => b.subarray(0, 12)],
  ];
  for (const [name, mutate] of bad) {
    const b = mutate(Buffer.from(pkt));
    assert.throws(
      () => segmentVnet(b, 0, b.length, Buffer.alloc(65536), collect()),
      (e) => isStraitError(e, 'STRAIT_ERR_TUNNEL_MALFORMED'),
      name,
    );
  }
});
