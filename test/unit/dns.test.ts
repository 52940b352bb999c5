// The world's cluster DNS (docs/world.md). Answers checked with the real `dig`; malformed packets
// (20k random and mutated) never stop the server.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { plausibleQuery } from '../../src/multicluster/wire/dns-query/index.js';
import { ClusterZone, startDnsServer, type RunningDnsServer, type ServiceRecord } from '../../src/world/cluster-dns/index.js';

const zone = new ClusterZone();
zone.setServices([
  { namespace: 'default', name: 'echo', clusterIP: '100.1.0.11', endpointIPs: ['10.1.0.2'] },
  { namespace: 'shop', name: 'db', endpointIPs: ['10.1.1.7', '10.1.0.5'] },
] as unknown as ServiceRecord[]);
let server: RunningDnsServer;
before(async () => {
  server = await startDnsServer({ address: '127.0.0.1', port: 0, resolvers: [zone] });
});
after(() => server.close());

// dig runs asynchronously: the server under test lives in this process's event loop
const dig = async (...args: string[]): Promise<string> =>
  (await promisify(execFile)('dig', ['@127.0.0.1', '-p', String(server.port), '+tries=1', '+time=2', ...args], { encoding: 'utf8' })).stdout;

const table: { name: string; args: string[]; golden: string }[] = [
  {
    name: 'ClusterIP service',
    args: ['+noall', '+answer', 'echo.default.svc.cluster.local'],
    golden: 'echo.default.svc.cluster.local.\t5\tIN\tA\t100.1.0.11\n',
  },
  {
    name: 'headless service: the pod IPs',
    args: ['+noall', '+answer', 'db.shop.svc.cluster.local'],
    golden: 'db.shop.svc.cluster.local.\t5\tIN\tA\t10.1.0.5\ndb.shop.svc.cluster.local.\t5\tIN\tA\t10.1.1.7\n',
  },
  {
    name: 'case-insensitive',
    args: ['+noall', '+answer', 'ECHO.Default.svc.cluster.local'],
    golden: 'ECHO.Default.svc.cluster.local.\t5\tIN\tA\t100.1.0.11\n',
  },
  {
    name: 'over TCP',
    args: ['+tcp', '+noall', '+answer', 'echo.default.svc.cluster.local'],
    golden: 'echo.default.svc.cluster.local.\t5\tIN\tA\t100.1.0.11\n',
  },
];
for (const c of table) {
  test(`dns: ${c.name}`, async () => {
    assert.equal((await dig(...c.args)).replace(/ +/g, '\t').replace(/\t+/g, '\t'), c.golden);
  });
}

test('dns: NXDOMAIN for unknown services and names outside the zone; NODATA for AAAA', async () => {
  assert.match(await dig('nope.default.svc.cluster.local'), /status: NXDOMAIN/);
  assert.match(await dig('example.com'), /status: NXDOMAIN/);
  const aaaa = await dig('AAAA', 'echo.default.svc.cluster.local');
  assert.match(aaaa, /status: NOERROR/);
  assert.match(aaaa, /ANSWER: 0/);
  assert.match(await dig('svc.cluster.local'), /status: NOERROR/);
});

function mutate(base: Buffer, rnd: () => number): Buffer {
  const kind = rnd() % 4;
  if (kind === 0) return Buffer.from(Array.from({ length: rnd() % 64 }, () => rnd() & 255));
  const b = Buffer.from(base);
  if (kind === 1) {
    for (let i = 0; i < 1 + (rnd() % 6); i++) b[rnd() % b.length] = rnd() & 255;
    return b;
  }
  if (kind === 2) return b.subarray(0, rnd() % b.length);
  // label length bytes pointing past the end / compression loops
  b[12] = 0xc0;
  b[13] = 12;
  return b;
}

test('dns: 20k malformed packets over UDP and TCP; the server keeps answering', async () => {
  // a valid query for echo.default.svc.cluster.local, taken from dig's wire format
  const q = Buffer.from('1234010000010000000000000465636f680764656661756c74037376630763' + '6c7573746572056c6f63616c0000010001', 'hex');
  let seed = 42;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  const sock = createSocket('udp4');
  sock.on('message', () => undefined);
  for (let i = 0; i < 20_000; i++) {
    sock.send(mutate(q, rnd), server.port, '127.0.0.1');
    if (i % 500 === 0) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 200));
  sock.close();
  for (let i = 0; i < 50; i++) {
    await new Promise<void>((resolve) => {
      const s = connect(server.port, '127.0.0.1', () => {
        const body = mutate(q, rnd);
        const len = Buffer.alloc(2);
        len.writeUInt16BE(rnd() % 3 === 0 ? 65535 : body.length);
        s.end(Buffer.concat([len, body]));
      });
      s.on('error', () => resolve());
      s.on('close', () => resolve());
      s.setTimeout(300, () => s.destroy());
    });
  }
  assert.ok(server.stats.malformed > 0, 'some packets were counted as malformed');
  assert.equal((await dig('+noall', '+answer', 'echo.default.svc.cluster.local')).trim().split(/\s+/).pop(), '100.1.0.11');
});

test('dns: the query precheck bounds every crafted packet (20k, no throw)', () => {
  const q = Buffer.from('1234010000010000000000000465636f680764656661756c74037376630763' + '6c7573746572056c6f63616c0000010001', 'hex');
  assert.equal(plausibleQuery(q), true);
  let seed = 7;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  for (let i = 0; i < 20_000; i++) plausibleQuery(mutate(q, rnd));
});
