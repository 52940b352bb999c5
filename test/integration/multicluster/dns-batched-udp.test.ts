// The clusterset DNS server's UDP side on the addon's batched transport (one read takes a
// run of queries; answers to one client leave grouped by size at the end of the turn)
// against node:dgram (STRAIT_UDP=dgram), the reference: bursts of queries of many sizes,
// from many clients at once, with forwarded queries among them, each answered once, with
// its own ID and the answer the reference gives.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { Packet } from 'dns2';
import { zoneService } from '../../helpers/zone-service.js';
import { ClustersetZone, startClustersetDns, type ClustersetDns } from '../../../src/multicluster/control/clusterset-dns/index.js';
import { dnsQuery } from '../../helpers/dns-query.js';

const svc = (name: string, ip: string) => zoneService(name, { 'cluster-b': [{ ip }] });

/** names whose answers differ in length (1 to 40 characters), some not in the zone, and names outside it */
const NAMES: string[] = [];
for (let i = 0; i < 40; i++) NAMES.push(`${'s'.repeat(i + 1)}.default.svc.clusterset.local`);
for (let i = 0; i < 5; i++) NAMES.push(`missing-${i}.default.svc.clusterset.local`);
for (let i = 0; i < 5; i++) NAMES.push(`host-${i}.example.org`);

let zone: ClustersetZone;
let upstream: Socket;
let upstreamPort = 0;

before(async () => {
  zone = new ClustersetZone('cluster-a');
  for (let i = 0; i < 40; i++) zone.upsert(svc('s'.repeat(i + 1), `100.2.0.${i + 1}`));
  // the cluster's own DNS: answers every name with an address made from its length, after 20 ms
  upstream = createSocket('udp4');
  upstream.on('message', (msg, r) => {
    const req = Packet.parse(msg);
    const res = Packet.createResponseFromRequest(req);
    res.header.ra = 1;
    const name = req.questions[0]!.name;
    res.answers.push({ name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 30, address: `192.0.2.${name.length}` } as never);
    setTimeout(() => upstream.send(res.toBuffer(), r.port, r.address), 20);
  });
  await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', r));
  upstreamPort = upstream.address().port;
});

after(() => upstream.close());

async function server(dgram: boolean): Promise<ClustersetDns> {
  const saved = process.env['STRAIT_UDP'];
  if (dgram) process.env['STRAIT_UDP'] = 'dgram';
  try {
    return await startClustersetDns({ zone, port: 0, upstream: { address: '127.0.0.1', port: upstreamPort }, rateLimit: { qps: 1e6, burst: 1e6 } });
  } finally {
    if (saved === undefined) delete process.env['STRAIT_UDP'];
    else process.env['STRAIT_UDP'] = saved;
  }
}

/** what an answer says: rcode, the question and each record, without the ID */
function meaning(msg: Buffer): string {
  const p = Packet.parse(msg);
  const q = p.questions[0] as { name: string; type: number } | undefined;
  const rrs = (p.answers as { name: string; address?: string }[]).map((a) => `${a.name} ${a.address ?? ''}`);
  return `${p.header.rcode} ${q?.name ?? '?'}/${q?.type ?? '?'} aa=${p.header.aa} ${rrs.join(',')}`;
}

/**
 * `clients` sockets each send `perClient` queries (names in turn) in one burst; every
 * answer by query ID: [client][query] -> the answer's meaning. Fails on a duplicate or a
 * missing answer.
 */
async function burst(dns: ClustersetDns, clients: number, perClient: number): Promise<string[][]> {
  const socks: Socket[] = [];
  const got: Map<number, Buffer>[] = [];
  for (let c = 0; c < clients; c++) {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    const m = new Map<number, Buffer>();
    s.on('message', (msg) => {
      const id = msg.readUInt16BE(0);
      assert.ok(!m.has(id), `client ${c}: query ${id} answered twice`);
      m.set(id, msg);
    });
    socks.push(s);
    got.push(m);
  }
  try {
    for (let q = 0; q < perClient; q++)
      for (let c = 0; c < clients; c++) socks[c]!.send(dnsQuery(NAMES[(q + c) % NAMES.length]!, 1, { id: q + 1, rd: true }), dns.port, '127.0.0.1');
    const deadline = Date.now() + 10_000;
    while (got.some((m) => m.size < perClient) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return got.map((m, c) =>
      Array.from({ length: perClient }, (_, q) => {
        const msg = m.get(q + 1);
        assert.ok(msg, `client ${c}: query ${q + 1} (${NAMES[(q + c) % NAMES.length]}) never answered`);
        return meaning(msg);
      }),
    );
  } finally {
    for (const s of socks) s.close();
  }
}

describe('clusterset DNS over the batched UDP transport, against node:dgram', () => {
  let batched: ClustersetDns;
  let reference: ClustersetDns;
  before(async () => {
    batched = await server(false);
    reference = await server(true);
  });
  after(async () => {
    await batched.close();
    await reference.close();
  });

  test('the server is on the batched transport (the addon is built), the reference on node:dgram', () => {
    assert.equal(batched.udpBatched, true);
    assert.equal(reference.udpBatched, false);
  });

  test('one client, 400 queries in one burst (40 answer sizes, NXDOMAIN, forwarded): each answered once with its ID, as the reference answers', async () => {
    const want = await burst(reference, 1, 400);
    const seen = await burst(batched, 1, 400);
    assert.deepEqual(seen, want);
    // the answers are real: an exported name has its address, a missing one NXDOMAIN, a forwarded one the upstream's
    assert.match(seen[0]![0]!, /^0 s\.default\.svc\.clusterset\.local\/1 aa=1 s\.default\.svc\.clusterset\.local 100\.2\.0\.1$/);
    assert.match(seen[0]![40]!, /^3 missing-0\./);
    assert.match(seen[0]![45]!, /^0 host-0\.example\.org\/1 aa=0 host-0\.example\.org 192\.0\.2\.18$/);
  });

  test('80 clients at once (more than the server groups in a turn), 20 queries each: every one answered as the reference answers', async () => {
    const want = await burst(reference, 80, 20);
    const seen = await burst(batched, 80, 20);
    assert.deepEqual(seen, want);
  });
});
