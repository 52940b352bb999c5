// The world's cluster DNS (docs/world.md): dns2's parser spends ~1 s of CPU on one packet whose section
// counts are huge (found by the fuzz loop in test/unit/dns.test.ts). The server must
// drop such packets before parsing them, so a trickle of them cannot stall DNS.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { plausibleQuery } from '../../src/multicluster/wire/dns-query/index.js';
import { ClusterZone, startDnsServer } from '../../src/world/cluster-dns/index.js';

const crafted = [
  '00004080c0000000000000400000400040000000000000000000000000000000',
  '8000004000000000408080000000000000004000400000000040004000400000000000004000004000003810000000000000004079000000',
  '0038000040000000000000004000400000400040004078400000000000000000380000004000000000000040780000000000004000000040',
].map((h) => Buffer.from(h, 'hex'));

test('crafted high-count packets are refused by the precheck and counted as malformed', async () => {
  for (const p of crafted) assert.equal(plausibleQuery(p), false);
  const server = await startDnsServer({ address: '127.0.0.1', port: 0, resolvers: [new ClusterZone()] });
  try {
    const sock = createSocket('udp4');
    for (let i = 0; i < 30; i++) for (const p of crafted) sock.send(p, server.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 300));
    sock.close();
    assert.equal(server.stats.malformed, 90);
    assert.equal(server.stats.queries, 0);
  } finally {
    await server.close();
  }
});
