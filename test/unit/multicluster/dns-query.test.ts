// The DNS query fast path agrees with dns2 on well-formed queries and never throws on junk.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readQuery } from '../../../src/multicluster/wire/dns-query/index.js';
import { dnsQuery } from '../../helpers/dns-query.js';

const query = (name: string, type: number, edns: boolean): Buffer => dnsQuery(name, type, { id: 4242, edns });

test('readQuery reads what dns2 wrote', () => {
  for (const [name, type, edns] of [
    ['echo.default.svc.clusterset.local', 1, false],
    ['_http._tcp.Echo.default.svc.clusterset.local', 33, true],
  ] as const) {
    const q = readQuery(query(name, type, edns));
    assert.deepEqual(q, { id: 4242, rd: true, qname: name, qtype: type, qclass: 1, edns: edns ? 4096 : 0 });
  }
});

test('fuzz: 50k random and mutated queries never throw', () => {
  const seeds = [query('echo.default.svc.clusterset.local', 1, true), query('a.b', 33, false)];
  let seed = 99;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 50_000; i++) {
    const s = seeds[rnd(2)]!;
    const b = i % 3 === 0 ? Buffer.from(Array.from({ length: rnd(64) }, () => rnd(256))) : Buffer.from(s.subarray(0, rnd(s.length + 1)));
    for (let j = 0, n = rnd(4); j < n && b.length > 0; j++) b[rnd(b.length)] = rnd(256);
    const q = readQuery(b);
    if (q) assert.ok(q.qname.length <= 254);
  }
});
