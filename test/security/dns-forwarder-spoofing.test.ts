// Off-path answers to the clusterset.local DNS forwarder: a reply to a forwarded query is
// taken only from the upstream's address and port, for a pending (random) query ID and
// with that query's question. The attacker is another local socket that knows the
// forwarder's source port (it can read /proc/net/udp) and, here, even the query ID.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Packet } from 'dns2';
import { ClustersetZone, startClustersetDns, type ClustersetDns } from '../../src/multicluster/control/clusterset-dns/index.js';
import { sameQuestion } from '../../src/multicluster/wire/dns-query/index.js';
import { dnsQuery } from '../helpers/dns-query.js';

const run = promisify(execFile);

/** A response to `query` (same ID and question) with one A record. */
function answerTo(query: Buffer, address: string, name?: string): Buffer {
  const req = Packet.parse(query);
  const res = Packet.createResponseFromRequest(req);
  res.header.ra = 1;
  if (name !== undefined) res.questions = [{ name, type: Packet.TYPE.A, class: Packet.CLASS.IN }] as never;
  res.answers.push({ name: name ?? req.questions[0]!.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 30, address } as never);
  return res.toBuffer();
}

interface Seen {
  msg: Buffer;
  port: number;
  address: string;
}

/** An upstream on 127.0.0.1 that records queries and answers each with `answer` after `delayMs`. */
async function upstream(answer: (q: Buffer) => Buffer[], delayMs: number): Promise<{ sock: { close(): void }; port: number; seen: Seen[] }> {
  const sock = createSocket('udp4');
  const seen: Seen[] = [];
  const timers = new Set<NodeJS.Timeout>();
  sock.on('message', (msg, r) => {
    seen.push({ msg, port: r.port, address: r.address });
    const t = setTimeout(() => {
      timers.delete(t);
      for (const out of answer(msg)) sock.send(out, r.port, r.address);
    }, delayMs);
    timers.add(t);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const close = (): void => {
    for (const t of timers) clearTimeout(t);
    sock.close();
  };
  return { sock: { close }, port: sock.address().port, seen };
}

async function dig(dns: ClustersetDns, name: string): Promise<string> {
  const { stdout } = await run('dig', [`@${dns.address}`, '-p', String(dns.port), '+time=3', '+tries=1', name]);
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? '?';
  const a = stdout
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith(';'))
    .map((l) => l.trim().split(/\s+/).at(-1));
  return [status, ...a].join(' ');
}

const waitFor = async (cond: () => boolean, ms = 3000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

test('a forged reply from another local address on the upstream port is ignored', async () => {
  // the real upstream answers 192.0.2.7 after 300 ms; the attacker answers at once
  const up = await upstream((q) => [answerTo(q, '192.0.2.7')], 300);
  const attacker = createSocket('udp4');
  await new Promise<void>((r) => attacker.bind(up.port, '127.0.0.2', r));
  const dns = await startClustersetDns({ zone: new ClustersetZone('cluster-a'), port: 0, upstream: { address: '127.0.0.1', port: up.port } });
  try {
    const answer = dig(dns, 'www.example.org');
    await waitFor(() => up.seen.length > 0);
    const q = up.seen[0]!;
    // same source port as the upstream, the exact ID and question: only the address differs
    attacker.send(answerTo(q.msg, '6.6.6.6'), q.port, '127.0.0.1');
    assert.equal(await answer, 'NOERROR 192.0.2.7');
  } finally {
    attacker.close();
    up.sock.close();
    await dns.close();
  }
});

test('a reply from the upstream for another question is ignored', async () => {
  // first a reply with the right ID but another name, then the right one
  const up = await upstream((q) => [answerTo(q, '6.6.6.6', 'evil.example.org'), answerTo(q, '192.0.2.7')], 50);
  const dns = await startClustersetDns({ zone: new ClustersetZone('cluster-a'), port: 0, upstream: { address: '127.0.0.1', port: up.port } });
  try {
    assert.equal(await dig(dns, 'www.example.org'), 'NOERROR 192.0.2.7');
    assert.equal(dns.counters.upstreamRejected, 1);
  } finally {
    up.sock.close();
    await dns.close();
  }
});

test('forwarded query IDs are random, not a sequence an attacker can predict', async () => {
  const up = await upstream((q) => [answerTo(q, '192.0.2.7')], 0);
  const dns = await startClustersetDns({ zone: new ClustersetZone('cluster-a'), port: 0, upstream: { address: '127.0.0.1', port: up.port } });
  const client = createSocket('udp4');
  await new Promise<void>((r) => client.bind(0, '127.0.0.1', r));
  try {
    for (let i = 0; i < 64; i++) client.send(dnsQuery(`n${i}.example.org`, 1, { id: 7 }), dns.port, '127.0.0.1');
    await waitFor(() => up.seen.length === 64);
    const ids = up.seen.map((s) => s.msg.readUInt16BE(0));
    assert.equal(new Set(ids).size, 64, 'IDs are distinct');
    // a sequence (each ID one more than the last) is what the old forwarder sent
    const steps = ids.slice(1).filter((id, i) => id === ((ids[i]! + 1) & 0xffff)).length;
    assert.ok(steps < 4, `IDs follow each other: ${ids.join(',')}`);
  } finally {
    client.close();
    up.sock.close();
    await dns.close();
  }
});

test('sameQuestion compares name without case, type and class exactly', () => {
  const q = dnsQuery('www.Example.org', 1);
  assert.equal(sameQuestion(q, answerTo(q, '192.0.2.7')), true);
  assert.equal(sameQuestion(q, answerTo(dnsQuery('WWW.example.ORG', 1), '192.0.2.7')), true);
  assert.equal(sameQuestion(q, dnsQuery('www.example.org', 28)), false);
  assert.equal(sameQuestion(q, dnsQuery('www.example.com', 1)), false);
  assert.equal(sameQuestion(q, dnsQuery('www.example.org.x', 1)), false);
  assert.equal(sameQuestion(q, q.subarray(0, 20)), false);
  // qtype 0x41 and 0x61 are different types, not letters of a name
  assert.equal(sameQuestion(dnsQuery('a.b', 0x41), dnsQuery('a.b', 0x61)), false);
});
