// The special-purpose address registry (src/base/special-addresses): a named table of
// addresses, the range each falls in and whether a server may connect there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyAddress, isPublicAddress, IPV4_SPECIAL, IPV6_SPECIAL, parseIpv6 } from '../../src/base/special-addresses/index.js';

// [address, public, range name (undefined: in no range), embedded IPv4]
const CASES: [string, boolean, string | undefined, string?][] = [
  // IPv4
  ['8.8.8.8', true, undefined],
  ['1.1.1.1', true, undefined],
  ['172.32.0.1', true, undefined],
  ['100.128.0.1', true, undefined],
  ['0.0.0.0', false, 'this network'],
  ['0.1.2.3', false, 'this network'],
  ['10.255.0.1', false, 'private use'],
  ['100.64.0.1', false, 'shared address space (CGNAT)'],
  ['127.0.0.1', false, 'loopback'],
  ['127.255.255.254', false, 'loopback'],
  ['169.254.169.254', false, 'link local'],
  ['172.31.255.255', false, 'private use'],
  ['192.0.0.1', false, 'IPv4 service continuity prefix (DS-Lite)'],
  ['192.0.0.8', false, 'IPv4 dummy address'],
  ['192.0.0.9', true, 'port control protocol anycast'],
  ['192.0.0.10', true, 'traversal using relays around NAT anycast'],
  ['192.0.0.100', false, 'IETF protocol assignments'],
  ['192.0.0.171', false, 'NAT64/DNS64 discovery'],
  ['192.0.2.1', false, 'documentation (TEST-NET-1)'],
  ['192.31.196.1', true, 'AS112-v4'],
  ['192.88.99.1', false, 'deprecated 6to4 relay anycast'],
  ['192.168.1.1', false, 'private use'],
  ['198.19.255.255', false, 'benchmarking'],
  ['198.51.100.7', false, 'documentation (TEST-NET-2)'],
  ['203.0.113.7', false, 'documentation (TEST-NET-3)'],
  ['224.0.0.251', false, 'multicast'],
  ['239.255.255.250', false, 'multicast'],
  ['240.0.0.1', false, 'reserved'],
  ['255.255.255.255', false, 'limited broadcast'],
  // IPv6
  ['2606:4700::1111', true, 'global unicast'],
  ['2a00:1450:4001::200e', true, 'global unicast'],
  ['::', false, 'unspecified address'],
  ['::1', false, 'loopback address'],
  ['[::1]', false, 'loopback address'],
  ['::127.0.0.1', false, 'IPv4-compatible (deprecated)'],
  ['::8.8.8.8', false, 'IPv4-compatible (deprecated)'],
  ['::ffff:8.8.8.8', true, 'IPv4-mapped', '8.8.8.8'],
  ['::ffff:10.0.0.1', false, 'IPv4-mapped', '10.0.0.1'],
  ['::ffff:7f00:1', false, 'IPv4-mapped', '127.0.0.1'],
  ['::ffff:0:127.0.0.1', false, 'IPv4-translated (SIIT, obsolete)'],
  ['::ffff:0:808:808', false, 'IPv4-translated (SIIT, obsolete)'],
  ['64:ff9b::8.8.8.8', true, 'IPv4-IPv6 translation (NAT64 well-known prefix)', '8.8.8.8'],
  ['64:ff9b::a00:1', false, 'IPv4-IPv6 translation (NAT64 well-known prefix)', '10.0.0.1'],
  ['64:ff9b:1::8.8.8.8', false, 'IPv4-IPv6 translation, local use'],
  ['100::1', false, 'discard-only'],
  ['100:0:0:1::1', false, 'dummy IPv6 prefix'],
  ['2001::1', false, 'TEREDO'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false, 'TEREDO'],
  ['2001:1::1', true, 'port control protocol anycast'],
  ['2001:1::4', false, 'IETF protocol assignments'],
  ['2001:2::1', false, 'benchmarking'],
  ['2001:3::1', true, 'AMT'],
  ['2001:4:112::1', true, 'AS112-v6'],
  ['2001:10::1', false, 'deprecated ORCHID'],
  ['2001:20::1', true, 'ORCHIDv2'],
  ['2001:1ff::1', false, 'IETF protocol assignments'],
  ['2001:200::1', true, 'global unicast'],
  ['2001:db8::1', false, 'documentation'],
  ['2002:808:808::1', true, '6to4', '8.8.8.8'],
  ['2002:7f00:1::', false, '6to4', '127.0.0.1'],
  ['2002:c0a8:101::1', false, '6to4', '192.168.1.1'],
  ['2620:4f:8000::1', true, 'direct delegation AS112 service'],
  ['3fff:abc::1', false, 'documentation'],
  ['5f00::1', false, 'segment routing (SRv6) SIDs'],
  ['fc00::1', false, 'unique-local'],
  ['fd12:3456::1', false, 'unique-local'],
  ['fe80::1%eth0', false, 'link-local unicast'],
  ['febf::1', false, 'link-local unicast'],
  ['fec0::1', false, 'site-local (deprecated)'],
  ['feff::1', false, 'site-local (deprecated)'],
  ['ff02::1', false, 'multicast'],
  ['4000::1', false, 'outside global unicast 2000::/3 (reserved or unassigned)'],
  ['1::1', false, 'outside global unicast 2000::/3 (reserved or unassigned)'],
  // not addresses: never public
  ['example.com', false, undefined],
  ['1.2.3', false, undefined],
  ['1.2.3.256', false, undefined],
  ['01.2.3.4', false, undefined],
  ['1::2::3', false, undefined],
  ['1:2:3:4:5:6:7:8:9', false, undefined],
  ['12345::1', false, undefined],
  ['::ffff:1.2.3.999', false, undefined],
  ['', false, undefined],
];

for (const [addr, pub, range, embedded] of CASES) {
  test(`${JSON.stringify(addr)} is ${pub ? 'public' : 'not public'}${range ? ` (${range})` : ''}`, () => {
    const c = classifyAddress(addr);
    assert.equal(c.public, pub);
    assert.equal(isPublicAddress(addr), pub);
    assert.equal(c.range?.name, range);
    assert.equal(c.embedded, embedded);
  });
}

test('every registry entry parses, has no host bits set, and classes its first address', () => {
  for (const [table, width] of [
    [IPV4_SPECIAL, 32],
    [IPV6_SPECIAL, 128],
  ] as const) {
    for (const e of table) {
      const [a, p] = e.cidr.split('/') as [string, string];
      const prefix = Number(p);
      assert.ok(prefix >= 0 && prefix <= width, e.cidr);
      const bits = width === 32 ? a.split('.').reduce((n, o) => (n << 8n) | BigInt(o), 0n) : parseIpv6(a);
      assert.notEqual(bits, undefined, e.cidr);
      assert.equal((bits as bigint) & ((1n << BigInt(width - prefix)) - 1n), 0n, `${e.cidr} has host bits`);
      // the most specific range wins: the entry itself or one nested in it
      if (!e.embeds) assert.ok(Number(classifyAddress(a).range?.cidr.split('/')[1]) >= prefix, `${a} is classed by ${e.cidr} or a range inside it`);
    }
  }
});

test('parseIpv6 reads the textual forms of RFC 4291 and RFC 5952', () => {
  assert.equal(parseIpv6('::'), 0n);
  assert.equal(parseIpv6('::1'), 1n);
  assert.equal(parseIpv6('1::'), 1n << 112n);
  assert.equal(parseIpv6('0:0:0:0:0:ffff:127.0.0.1'), 0xffff7f000001n);
  assert.equal(parseIpv6('2001:DB8::A'), 0x20010db8000000000000000000000000n | 0xan);
  assert.equal(parseIpv6('1:2:3:4:5:6:7:8'), 0x00010002000300040005000600070008n);
  assert.equal(parseIpv6('1:2:3:4:5:6:7::'), 0x00010002000300040005000600070000n);
  assert.equal(parseIpv6('1:2:3:4:5:6:7:8::'), undefined);
  assert.equal(parseIpv6(':1'), undefined);
});
