// Attack regressions for the clusterset.local DNS server (docs/multicluster.md): malformed packets never
// crash it, a flood from one source is bounded, responses are never answered (no reflection).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { connect } from 'node:net';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { type ClustersetDns, ClustersetZone, startClustersetDns, type ZoneService } from '../../src/multicluster/control/clusterset-dns/index.js';
import { dnsQuery } from '../helpers/dns-query.js';

const run = promisify(execFile);

function zone() {
  const z = new ClustersetZone('cluster-a');
  z.upsert({
    namespace: 'default',
    name: 'echo',
    headless: false,
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    clusters: new Map([['cluster-b', { ports: [], endpoints: [{ ip: '100.2.0.10', ready: true }] }]]),
  } as unknown as ZoneService);
  return z;
}

const query = (name: string, type: number): Buffer => dnsQuery(name, type);

/** A server on the zone and a UDP client on loopback that counts the replies it gets; both closed after `fn`. */
async function withClient(
  rateLimit: { qps: number; burst: number } | undefined,
  fn: (dns: ClustersetDns, sock: Socket, replies: () => number) => Promise<void>,
): Promise<void> {
  const dns = await startClustersetDns({ zone: zone(), port: 0, ...(rateLimit ? { rateLimit } : {}) });
  const sock = createSocket('udp4');
  let replies = 0;
  sock.on('message', () => {
    replies++;
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  try {
    await fn(dns, sock, () => replies);
  } finally {
    sock.close();
    await dns.close();
  }
}

test('20k malformed and mutated UDP packets do not crash the server, which still answers dig', async () => {
  await withClient({ qps: 1e9, burst: 1e9 }, async (dns, sock, replies) => {
    const seeds = [query('echo.default.svc.clusterset.local', 1), query('_http._tcp.echo.default.svc.clusterset.local', 33), query('x.y', 255)];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      let b: Buffer;
      const kind = rnd(4);
      if (kind === 0) {
        b = Buffer.alloc(rnd(80));
        for (let j = 0; j < b.length; j++) b[j] = rnd(256);
      } else {
        const s = seeds[rnd(seeds.length)]!;
        b = Buffer.from(s.subarray(0, kind === 1 ? rnd(s.length + 1) : s.length));
        for (let j = 0, n = 1 + rnd(6); j < n && b.length > 0; j++) b[rnd(b.length)] = rnd(256);
        if (kind === 3 && b.length > 5) b.writeUInt16BE(rnd(65536), 4); // lie about counts
      }
      sock.send(b, dns.port, '127.0.0.1');
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 300));
    const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(dns.port), '+short', '+time=2', '+tries=1', 'echo.default.svc.clusterset.local']);
    assert.equal(stdout.trim(), '100.2.0.10');
    assert.ok(dns.counters.malformed > 0);
    assert.ok(replies() > 0);
  });
});

test('malformed TCP frames (short, oversized length, garbage) do not crash the server', async () => {
  const dns = await startClustersetDns({ zone: zone(), port: 0 });
  try {
    for (const payload of [Buffer.from([0x00]), Buffer.from([0xff, 0xff, 1, 2, 3]), Buffer.from([0, 5, 1, 2, 3, 4, 5]), Buffer.alloc(3000, 0x41)]) {
      await new Promise<void>((res) => {
        const s = connect(dns.port, '127.0.0.1', () => {
          s.end(payload);
        });
        s.on('error', () => res());
        s.on('close', () => res());
        s.resume();
        setTimeout(() => {
          s.destroy();
          res();
        }, 300);
      });
    }
    const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(dns.port), '+tcp', '+short', 'echo.default.svc.clusterset.local']);
    assert.equal(stdout.trim(), '100.2.0.10');
  } finally {
    await dns.close();
  }
});

test('a query flood from one source is bounded by the per-source rate', async () => {
  await withClient({ qps: 50, burst: 50 }, async (dns, sock, replies) => {
    const q = query('echo.default.svc.clusterset.local', 1);
    const started = performance.now();
    for (let i = 0; i < 2000; i++) {
      sock.send(q, dns.port, '127.0.0.1');
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 400));
    // the burst of 50 plus what refills at 50/s while the flood lasts (about 1 s on a quiet
    // machine, longer on a loaded one: the bound follows the time the flood really took)
    const refill = Math.ceil(((performance.now() - started) / 1000) * 50);
    assert.ok(replies() <= 50 + refill, `replies ${replies()}, bound ${50 + refill}`);
    assert.ok(replies() >= 40, `replies ${replies()}`);
    assert.ok(dns.counters.rateLimited >= 500, `limited ${dns.counters.rateLimited}`);
  });
});

test('DNS responses sent to the server are never answered (no reflection loop)', async () => {
  await withClient(undefined, async (dns, sock, replies) => {
    const q = query('echo.default.svc.clusterset.local', 1);
    q[2] = q[2]! | 0x80; // QR = response
    for (let i = 0; i < 10; i++) sock.send(q, dns.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(replies(), 0);
  });
});
