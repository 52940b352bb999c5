// clusterset.local answers, checked with the real `dig` against a loopback port. Golden
// answers are written in zone-file text (dig's own output, whitespace collapsed).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { Packet } from 'dns2';
import { Registry } from 'prom-client';
import { zoneService } from '../../helpers/zone-service.js';
import { ClustersetZone, startClustersetDns, type ClustersetDns } from '../../../src/multicluster/control/clusterset-dns/index.js';

const run = promisify(execFile);

const svc = zoneService;

let zone: ClustersetZone;
let dns: ClustersetDns;
let plain: ClustersetDns;
let upstream: ReturnType<typeof createSocket>;
const registry = new Registry();

before(async () => {
  zone = new ClustersetZone('cluster-a', { isConnected: (c) => c !== 'cluster-d' });
  zone.upsert(svc('echo', { 'cluster-b': [{ ip: '100.2.0.10' }] }));
  zone.upsert(svc('both', { 'cluster-a': [{ ip: '100.1.0.11' }], 'cluster-b': [{ ip: '100.2.0.11' }] }));
  zone.upsert(svc('rr', { 'cluster-b': [{ ip: '100.2.0.12' }], 'cluster-c': [{ ip: '100.3.0.12' }] }));
  zone.upsert(svc('lost', { 'cluster-d': [{ ip: '100.4.0.13' }] }));
  zone.upsert(
    svc(
      'db',
      {
        'cluster-b': [
          { ip: '10.2.1.5', hostname: 'db-0' },
          { ip: '10.2.1.6', hostname: 'db-1' },
        ],
      },
      { headless: true, ports: [{ name: 'postgres', protocol: 'TCP', port: 5432 }] },
    ),
  );
  // the conformance suite's shapes: tcp/42 and udp/42 under one name; pods named by address
  const fortyTwo = [
    { name: 'tcp', protocol: 'TCP', port: 42 },
    { name: 'udp', protocol: 'UDP', port: 42 },
  ];
  zone.upsert(svc('hello', { 'cluster-a': [{ ip: '100.1.0.42' }], 'cluster-b': [{ ip: '100.2.0.42' }] }, { ports: fortyTwo }));
  zone.upsert(
    svc(
      'hs',
      {
        'cluster-a': [{ ip: '10.1.0.7', hostname: '10-1-0-7' }],
        'cluster-b': [
          { ip: '10.2.0.8', hostname: '10-2-0-8' },
          { ip: '10.2.0.9', hostname: 'web-0' },
        ],
      },
      { headless: true, ports: fortyTwo },
    ),
  );
  // the cluster's own DNS, for names outside clusterset.local
  upstream = createSocket('udp4');
  upstream.on('message', (msg, r) => {
    const req = Packet.parse(msg);
    const res = Packet.createResponseFromRequest(req);
    res.header.ra = 1;
    res.answers.push({ name: req.questions[0]!.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 30, address: '192.0.2.7' } as never);
    upstream.send(res.toBuffer(), r.port, r.address);
  });
  await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', r));
  dns = await startClustersetDns({ zone, port: 0, upstream: { address: '127.0.0.1', port: upstream.address().port }, registry });
  plain = await startClustersetDns({ zone, port: 0, rateLimit: { qps: 20, burst: 20 } });
});

after(async () => {
  await dns.close();
  await plain.close();
  upstream.close();
});

async function dig(server: ClustersetDns, ...args: string[]): Promise<string> {
  const { stdout } = await run('dig', [`@${server.address}`, '-p', String(server.port), '+time=2', '+tries=1', ...args]);
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? '?';
  const flags = /flags: ([a-z ]+);/.exec(stdout)?.[1] ?? '';
  const records = stdout
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith(';'))
    .map((l) => l.trim().split(/\s+/).join(' '));
  return [`;; status ${status}${flags.split(' ').includes('aa') ? ' aa' : ''}`, ...records].join('\n');
}

const SOA = 'clusterset.local. 5 IN SOA ns.dns.clusterset.local. hostmaster.clusterset.local. 1 7200 1800 86400 5';

const golden: { name: string; args: string[]; want: string }[] = [
  {
    name: 'service exported only by cluster-b -> its ClusterIP',
    args: ['echo.default.svc.clusterset.local', 'A'],
    want: ';; status NOERROR aa\necho.default.svc.clusterset.local. 5 IN A 100.2.0.10',
  },
  {
    name: 'one cluster by name',
    args: ['cluster-b.echo.default.svc.clusterset.local', 'A'],
    want: ';; status NOERROR aa\ncluster-b.echo.default.svc.clusterset.local. 5 IN A 100.2.0.10',
  },
  { name: 'a cluster that does not export the service', args: ['cluster-a.echo.default.svc.clusterset.local', 'A'], want: `;; status NXDOMAIN aa\n${SOA}` },
  {
    name: 'the local cluster wins when it exports',
    args: ['both.default.svc.clusterset.local', 'A'],
    want: ';; status NOERROR aa\nboth.default.svc.clusterset.local. 5 IN A 100.1.0.11',
  },
  {
    name: 'headless: every pod IP',
    args: ['db.default.svc.clusterset.local', 'A'],
    want: ';; status NOERROR aa\ndb.default.svc.clusterset.local. 5 IN A 10.2.1.5\ndb.default.svc.clusterset.local. 5 IN A 10.2.1.6',
  },
  {
    name: 'headless: one pod by name',
    args: ['db-1.cluster-b.db.default.svc.clusterset.local', 'A'],
    want: ';; status NOERROR aa\ndb-1.cluster-b.db.default.svc.clusterset.local. 5 IN A 10.2.1.6',
  },
  {
    name: 'SRV for a named port',
    args: ['_http._tcp.echo.default.svc.clusterset.local', 'SRV'],
    want: ';; status NOERROR aa\n_http._tcp.echo.default.svc.clusterset.local. 5 IN SRV 0 50 8080 echo.default.svc.clusterset.local.\necho.default.svc.clusterset.local. 5 IN A 100.2.0.10',
  },
  {
    name: 'SRV of a headless service names each pod',
    args: ['_postgres._tcp.db.default.svc.clusterset.local', 'SRV'],
    want: ';; status NOERROR aa\n_postgres._tcp.db.default.svc.clusterset.local. 5 IN SRV 0 50 5432 db-0.cluster-b.db.default.svc.clusterset.local.\n_postgres._tcp.db.default.svc.clusterset.local. 5 IN SRV 0 50 5432 db-1.cluster-b.db.default.svc.clusterset.local.\ndb-0.cluster-b.db.default.svc.clusterset.local. 5 IN A 10.2.1.5\ndb-1.cluster-b.db.default.svc.clusterset.local. 5 IN A 10.2.1.6',
  },
  {
    name: 'SRV of a service name: one record for tcp/42 and udp/42',
    args: ['hello.default.svc.clusterset.local', 'SRV'],
    want: ';; status NOERROR aa\nhello.default.svc.clusterset.local. 5 IN SRV 0 50 42 hello.default.svc.clusterset.local.\nhello.default.svc.clusterset.local. 5 IN A 100.1.0.42',
  },
  {
    name: 'SRV of a headless service name: each pod once, StatefulSet hostnames kept',
    args: ['hs.default.svc.clusterset.local', 'SRV'],
    want:
      ';; status NOERROR aa\nhs.default.svc.clusterset.local. 5 IN SRV 0 50 42 10-1-0-7.cluster-a.hs.default.svc.clusterset.local.\n' +
      'hs.default.svc.clusterset.local. 5 IN SRV 0 50 42 10-2-0-8.cluster-b.hs.default.svc.clusterset.local.\n' +
      'hs.default.svc.clusterset.local. 5 IN SRV 0 50 42 web-0.cluster-b.hs.default.svc.clusterset.local.\n' +
      '10-1-0-7.cluster-a.hs.default.svc.clusterset.local. 5 IN A 10.1.0.7\n10-2-0-8.cluster-b.hs.default.svc.clusterset.local. 5 IN A 10.2.0.8\n' +
      'web-0.cluster-b.hs.default.svc.clusterset.local. 5 IN A 10.2.0.9',
  },
  {
    name: 'SRV of one named port of the headless service',
    args: ['_udp._udp.hs.default.svc.clusterset.local', 'SRV'],
    want:
      ';; status NOERROR aa\n_udp._udp.hs.default.svc.clusterset.local. 5 IN SRV 0 50 42 10-1-0-7.cluster-a.hs.default.svc.clusterset.local.\n' +
      '_udp._udp.hs.default.svc.clusterset.local. 5 IN SRV 0 50 42 10-2-0-8.cluster-b.hs.default.svc.clusterset.local.\n' +
      '_udp._udp.hs.default.svc.clusterset.local. 5 IN SRV 0 50 42 web-0.cluster-b.hs.default.svc.clusterset.local.\n' +
      '10-1-0-7.cluster-a.hs.default.svc.clusterset.local. 5 IN A 10.1.0.7\n10-2-0-8.cluster-b.hs.default.svc.clusterset.local. 5 IN A 10.2.0.8\n' +
      'web-0.cluster-b.hs.default.svc.clusterset.local. 5 IN A 10.2.0.9',
  },
  { name: 'SRV on an unknown port name', args: ['_grpc._tcp.echo.default.svc.clusterset.local', 'SRV'], want: `;; status NXDOMAIN aa\n${SOA}` },
  { name: 'a name that is not exported', args: ['nothere.default.svc.clusterset.local', 'A'], want: `;; status NXDOMAIN aa\n${SOA}` },
  { name: 'another type of a known name is NODATA', args: ['echo.default.svc.clusterset.local', 'AAAA'], want: `;; status NOERROR aa\n${SOA}` },
  { name: 'only a disconnected cluster exports it', args: ['lost.default.svc.clusterset.local', 'A'], want: `;; status NOERROR aa\n${SOA}` },
  {
    name: 'names are case-insensitive and echoed as asked',
    args: ['Echo.DEFAULT.svc.ClusterSet.local', 'A'],
    want: ';; status NOERROR aa\nEcho.DEFAULT.svc.ClusterSet.local. 5 IN A 100.2.0.10',
  },
  { name: 'the zone apex SOA', args: ['clusterset.local', 'SOA'], want: `;; status NOERROR aa\n${SOA}` },
  {
    name: 'over TCP too',
    args: ['+tcp', 'echo.default.svc.clusterset.local', 'A'],
    want: ';; status NOERROR aa\necho.default.svc.clusterset.local. 5 IN A 100.2.0.10',
  },
  {
    name: 'other names go to the cluster DNS',
    args: ['echo.default.svc.cluster.local', 'A'],
    want: ';; status NOERROR\necho.default.svc.cluster.local. 30 IN A 192.0.2.7',
  },
];

for (const g of golden) {
  test(`dig golden: ${g.name}`, async () => {
    assert.equal(await dig(dns, ...g.args), g.want);
  });
}

test('round-robin over connected clusters when the local cluster does not export', async () => {
  const seen = new Set<string>();
  for (let i = 0; i < 4; i++) seen.add((await run('dig', [`@127.0.0.1`, '-p', String(dns.port), '+short', 'rr.default.svc.clusterset.local'])).stdout.trim());
  assert.deepEqual([...seen].sort(), ['100.2.0.12', '100.3.0.12']);
});

test('without an upstream, names outside the zone are REFUSED', async () => {
  assert.equal(await dig(plain, 'example.org', 'A'), ';; status REFUSED');
});

test('answers follow the zone: after removal the name is NXDOMAIN', async () => {
  zone.upsert(svc('tmp', { 'cluster-b': [{ ip: '100.2.0.99' }] }));
  assert.match(await dig(dns, 'tmp.default.svc.clusterset.local'), /100\.2\.0\.99/);
  zone.remove('default', 'tmp');
  assert.equal(await dig(dns, 'tmp.default.svc.clusterset.local'), `;; status NXDOMAIN aa\n${SOA}`);
});

test('metrics count queries by type and rcode and pass promtool', async () => {
  const text = await registry.metrics();
  assert.match(text, /strait_dns_queries_total\{qtype="A",rcode="NOERROR"\} \d+/);
  assert.match(text, /strait_dns_queries_total\{qtype="A",rcode="NXDOMAIN"\} \d+/);
  assert.match(text, /strait_dns_queries_total\{qtype="SRV",rcode="NOERROR"\} \d+/);
  const child = execFile('promtool', ['check', 'metrics']);
  child.stdin!.end(text);
  const code = await new Promise<number>((r) => child.on('exit', (c) => r(c ?? 1)));
  assert.equal(code, 0);
});
