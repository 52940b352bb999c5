// Multicluster service export (docs/multicluster.md) in the default world: `strait up` deploys the broker and joins both
// clusters; export echo in cluster-b; cluster-a's ServiceImport gets a clusterset IP from
// cluster-a's service CIDR (its derived Service); from cluster-a's client pod, dig answers
// exactly spec.ips (cluster-b's ClusterIP by cluster name), the ServiceExport is Valid True,
// curl through the name and to the clusterset IP returns 200 from cluster-b's echo with the
// client pod's address seen, and from cluster-b's own client through cluster-b's clusterset
// IP (its echo mirrored behind it); a join with an overlapping CIDR is refused naming both clusters;
// after unexport the name is NXDOMAIN and the derived Service is gone.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { strait, upWorld, type TestWorld } from '../../helpers/world.js';

let world: TestWorld;
before(() => {
  world = upWorld();
});
after(() => world?.cleanup());

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);

/** A cluster's ServiceImport, as `strait get` prints it; undefined while there is none. */
function serviceImport(
  cluster: string,
  name: string,
): { metadata: { annotations?: Record<string, string> }; spec: { ips?: string[]; ipFamilies?: string[] } } | undefined {
  const out = s('get', 'serviceimport', name, '-n', 'default', '--cluster', cluster, '-o', 'json');
  return out.status === 0 ? JSON.parse(out.stdout) : undefined;
}

/** The clusterset IPs of a cluster's ServiceImport, once it has them. */
async function clustersetIPs(cluster: string, name: string): Promise<string[]> {
  let ips: string[] = [];
  await eventually(
    `spec.ips of ${cluster}'s ServiceImport ${name}`,
    () => {
      ips = serviceImport(cluster, name)?.spec.ips ?? [];
      return ips.length > 0;
    },
    30_000,
  );
  return ips;
}

/** curl from a pod: the echo's JSON answer and the HTTP code */
function curlFrom(pod: string, url: string): { code: string; body: string; stderr: string } {
  const curl = world.exec(pod, ['curl', '-s', '-m', '5', '-w', '\\n%{http_code}', url]);
  const lines = curl.stdout.trim().split('\n').filter(Boolean);
  const code = lines.pop() ?? '';
  return { code, body: lines.join('\n'), stderr: curl.stderr };
}

async function eventually(what: string, fn: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('export echo in cluster-b and reach it from cluster-a by its clusterset.local name', async () => {
  const file = join(world.stateDir, 'broker-info.subm');
  await eventually('broker-info.subm from strait up', () => existsSync(file));
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const rec = world.record();
  const clusterIP = rec.clusters.find((c) => c.name === 'cluster-b')!.services.find((x) => x.name === 'echo')!.clusterIP!;
  const clientIP = rec.clusters.find((c) => c.name === 'cluster-a')!.pods.find((p) => p.name === 'client')!.ip;
  // the clusters joined at start: exporting needs it
  await eventually('cluster-b joined', () => s('show', 'networks', '--cluster', 'cluster-b', '-o', 'json').stdout.includes('100.2.0.0/16'));

  const ex = s('export', 'service', '--namespace', 'default', 'echo', '--cluster', 'cluster-b');
  assert.equal(ex.status, 0, ex.stderr);
  const dig = (name: string) => world.exec('cluster-a/default/client', ['dig', '+short', '+time=1', '+tries=2', name]).stdout.trim();
  // the clusterset IP: cluster-a's derived Service's address, in cluster-a's service CIDR
  const ips = await clustersetIPs('cluster-a', 'echo');
  // the default world's cluster-a (src/world/world-file/config.ts): service CIDR 100.1.0.0/16
  const serviceCIDR = '100.1.0.0/16';
  assert.equal(ips.length, 1);
  assert.match(ips[0]!, /^100\.1\.\d+\.\d+$/, `the clusterset IP ${ips[0]} is in cluster-a's service CIDR ${serviceCIDR}`);
  assert.deepEqual(serviceImport('cluster-a', 'echo')?.spec.ipFamilies, ['IPv4']);
  const derived = serviceImport('cluster-a', 'echo')!.metadata.annotations!['multicluster.kubernetes.io/derived-service']!;
  const dsvc = JSON.parse(s('get', 'service', derived, '-n', 'default', '--cluster', 'cluster-a', '-o', 'json').stdout) as {
    metadata: { ownerReferences: { kind: string; name: string }[] };
    spec: { clusterIP: string };
  };
  assert.equal(dsvc.spec.clusterIP, ips[0]);
  assert.deepEqual(
    dsvc.metadata.ownerReferences.map((o) => `${o.kind}/${o.name}`),
    ['ServiceImport/echo'],
  );
  // dig answers exactly spec.ips; the cluster's own name still that cluster's ClusterIP
  await eventually('the clusterset answer is the clusterset IP', () => dig('echo.default.svc.clusterset.local') === ips.join('\n'));
  assert.equal(dig('cluster-b.echo.default.svc.clusterset.local'), clusterIP);
  assert.notEqual(ips[0], clusterIP);

  const se = JSON.parse(s('get', 'serviceexport', 'echo', '-n', 'default', '--cluster', 'cluster-b', '-o', 'json').stdout) as {
    status: { conditions: { type: string; status: string; message: string }[] };
  };
  const valid = se.status.conditions.find((c) => c.type === 'Valid');
  assert.equal(valid?.status, 'True');
  assert.match(valid!.message, /synced to the broker/);

  // real traffic through the clusterset IP: by name, and to the address itself; cluster-b's echo answers
  for (const url of ['http://echo.default.svc.clusterset.local:8080/', `http://${ips[0]}:8080/`]) {
    const c = curlFrom('cluster-a/default/client', url);
    assert.equal(c.code, '200', `${url}: ${c.stderr}`);
    assert.equal(JSON.parse(c.body).remoteAddress, clientIP, url);
    assert.equal(JSON.parse(c.body).cluster, 'cluster-b', url);
  }
  // the exporting cluster reaches its own export through its own clusterset IP: its echo's
  // endpoints are mirrored behind it (endpointslice-mirror.ts), one translation on the client's node
  const ipsB = await clustersetIPs('cluster-b', 'echo');
  const clientB = rec.clusters.find((c) => c.name === 'cluster-b')!.pods.find((p) => p.name === 'client')!.ip;
  for (const url of ['http://echo.default.svc.clusterset.local:8080/', `http://${ipsB[0]}:8080/`]) {
    const c = curlFrom('cluster-b/default/client', url);
    assert.equal(c.code, '200', `from cluster-b, ${url}: ${c.stderr}`);
    assert.equal(JSON.parse(c.body).remoteAddress, clientB, url);
    assert.equal(JSON.parse(c.body).cluster, 'cluster-b', url);
  }

  const overlap = s(
    'join',
    join(world.stateDir, 'broker-info.subm'),
    '--clusterid',
    'cluster-c',
    '--clustercidr',
    '10.2.128.0/17',
    '--servicecidr',
    '100.3.0.0/16',
  );
  assert.equal(overlap.status, 4, overlap.stderr);
  assert.match(overlap.stderr, /cluster "cluster-c" cannot join: its CIDR "10\.2\.128\.0\/17" overlaps CIDR "10\.2\.0\.0\/16" of joined cluster "cluster-b"/);

  const un = s('unexport', 'service', '--namespace', 'default', 'echo', '--cluster', 'cluster-b');
  assert.equal(un.status, 0, un.stderr);
  await eventually('NXDOMAIN after unexport', () =>
    /status: NXDOMAIN/.test(world.exec('cluster-a/default/client', ['dig', '+time=1', 'echo.default.svc.clusterset.local']).stdout),
  );
  // the derived Service went with the ServiceImport, and its address with it
  await eventually('the derived Service removed', () => s('get', 'service', derived, '-n', 'default', '--cluster', 'cluster-a', '-o', 'json').status !== 0);
  assert.equal(serviceImport('cluster-a', 'echo'), undefined);
  const after = curlFrom('cluster-a/default/client', `http://${ips[0]}:8080/`);
  assert.notEqual(after.code, '200', 'the released clusterset IP no longer reaches the echo');
});

// The world's pod resolver is the clusterset.local server itself (SRV, headless,
// per-pod names, TTL 5, NXDOMAIN), and it forwards every other name to the cluster's DNS.
test('the world resolver answers SRV, headless and per-pod clusterset names and forwards the rest', async () => {
  const manifest = [
    'apiVersion: v1\nkind: Service\nmetadata: { name: echo-hl, namespace: default }\nspec:\n  clusterIP: None\n  selector: { app: echo }\n  ports: [{ name: http, port: 8080, protocol: TCP }]\n',
    'apiVersion: v1\nkind: Service\nmetadata: { name: echo-srv, namespace: default }\nspec:\n  selector: { app: echo }\n  ports: [{ name: web, port: 8081, targetPort: 8080, protocol: TCP }]\n',
  ].join('---\n');
  const ap = strait(['apply', '--cluster', 'cluster-b', '-f', '-', '--state-dir', world.stateDir], manifest);
  assert.equal(ap.status, 0, ap.stderr);
  for (const name of ['echo-hl', 'echo-srv']) {
    const ex = s('export', 'service', '--namespace', 'default', name, '--cluster', 'cluster-b');
    assert.equal(ex.status, 0, ex.stderr);
  }
  const rec = world.record();
  const echoPod = rec.clusters.find((c) => c.name === 'cluster-b')!.pods.find((p) => p.name.startsWith('echo'))!;
  let srvIP = '';
  await eventually('echo-srv ClusterIP', () => {
    const out = s('get', 'service', 'echo-srv', '-n', 'default', '--cluster', 'cluster-b', '-o', 'json');
    srvIP = out.status === 0 ? ((JSON.parse(out.stdout) as { spec: { clusterIP?: string } }).spec.clusterIP ?? '') : '';
    return srvIP !== '';
  });
  // dig through the pod's own resolv.conf: the answer section, whitespace collapsed
  const dig = (...args: string[]) => {
    const out = world.exec('cluster-a/default/client', ['dig', '+time=1', '+tries=2', '+noall', '+comments', '+answer', '+additional', ...args]).stdout;
    const status = /status: ([A-Z]+)/.exec(out)?.[1] ?? '?';
    const rrs = out
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith(';'))
      .map((l) => l.trim().split(/\s+/).join(' '));
    return [status, ...rrs].join('\n');
  };
  const hl = 'echo-hl.default.svc.clusterset.local';
  // a Deployment's pod has no hostname in its EndpointSlice: its address with dashes names it
  // (as Kubernetes' own DNS and the MCS conformance suite do)
  const pod = `${echoPod.ip.replaceAll('.', '-')}.cluster-b.${hl}`;
  await eventually('the headless import', () => dig(hl, 'A') === `NOERROR\n${hl}. 5 IN A ${echoPod.ip}`);
  // a headless import has no clusterset IP; the ClusterIP one's is cluster-a's own
  assert.equal(serviceImport('cluster-a', 'echo-hl')?.spec.ips, undefined);
  const [srvVip] = await clustersetIPs('cluster-a', 'echo-srv');
  await eventually('echo-srv answered by its clusterset IP', () => dig('echo-srv.default.svc.clusterset.local', 'A').endsWith(` A ${srvVip}`));
  const table: { name: string; args: string[]; want: string }[] = [
    { name: 'per-pod name of a headless service', args: [pod, 'A'], want: `NOERROR\n${pod}. 5 IN A ${echoPod.ip}` },
    {
      name: 'SRV of a headless service names each pod',
      args: [`_http._tcp.${hl}`, 'SRV'],
      want: `NOERROR\n_http._tcp.${hl}. 5 IN SRV 0 50 8080 ${pod}.\n${pod}. 5 IN A ${echoPod.ip}`,
    },
    {
      name: 'SRV for a named port of a ClusterIP service',
      args: ['_web._tcp.echo-srv.default.svc.clusterset.local', 'SRV'],
      want: `NOERROR\n_web._tcp.echo-srv.default.svc.clusterset.local. 5 IN SRV 0 50 8081 echo-srv.default.svc.clusterset.local.\necho-srv.default.svc.clusterset.local. 5 IN A ${srvVip}`,
    },
    {
      name: 'SRV for one cluster',
      args: ['_web._tcp.cluster-b.echo-srv.default.svc.clusterset.local', 'SRV'],
      want: `NOERROR\n_web._tcp.cluster-b.echo-srv.default.svc.clusterset.local. 5 IN SRV 0 50 8081 cluster-b.echo-srv.default.svc.clusterset.local.\ncluster-b.echo-srv.default.svc.clusterset.local. 5 IN A ${srvIP}`,
    },
    { name: 'a name that is not exported', args: ['nothere.default.svc.clusterset.local', 'A'], want: 'NXDOMAIN' },
    { name: 'a pod that does not exist', args: [`nopod.cluster-b.${hl}`, 'A'], want: 'NXDOMAIN' },
    {
      name: 'cluster.local goes to the cluster DNS',
      args: ['kube-dns.kube-system.svc.cluster.local', 'A'],
      want: `NOERROR\nkube-dns.kube-system.svc.cluster.local. 5 IN A ${rec.clusters.find((c) => c.name === 'cluster-a')!.services.find((x) => x.name === 'kube-dns')!.clusterIP}`,
    },
    { name: 'an unknown cluster.local name is NXDOMAIN from the cluster DNS', args: ['nothere.default.svc.cluster.local', 'A'], want: 'NXDOMAIN' },
  ];
  for (const t of table) assert.equal(dig(...t.args), t.want, t.name);
  // the curl path through the SRV target's name works too (the ClusterIP, port 8081 -> 8080)
  const curl = world.exec('cluster-a/default/client', [
    'curl',
    '-s',
    '-m',
    '5',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    'http://echo-srv.default.svc.clusterset.local:8081/',
  ]);
  assert.equal(curl.stdout, '200', curl.stderr);
  for (const name of ['echo-hl', 'echo-srv']) assert.equal(s('unexport', 'service', '--namespace', 'default', name, '--cluster', 'cluster-b').status, 0);
  await eventually('NXDOMAIN after unexport', () => dig(hl, 'A') === 'NXDOMAIN');
  // the world's /metrics counts these queries by type and rcode, per cluster, and promtool accepts it
  const metrics = spawnSync(
    'nsenter',
    ['-t', String(rec.supervisorPid), '-n', '--', 'curl', '-sf', `http://${(rec as unknown as { metrics: string }).metrics}/metrics`],
    { encoding: 'utf8' },
  ).stdout;
  const sample = (name: string, labels: string[]) => metrics.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)));
  for (const [name, labels] of [
    ['strait_dns_queries_total', ['qtype="SRV"', 'rcode="NOERROR"', 'cluster="cluster-a"']],
    ['strait_dns_queries_total', ['qtype="A"', 'rcode="NXDOMAIN"', 'cluster="cluster-a"']],
    ['strait_dns_forwarded_total', ['cluster="cluster-a"']],
  ] as [string, string[]][])
    assert.match(sample(name, labels) ?? '(none)', / [1-9]\d*$/, `${name} ${labels.join(',')}`);
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
  assert.equal(promtool.status, 0, promtool.stdout + promtool.stderr);
});

// strait verify sends real pod traffic, as subctl verify does (docs/multicluster.md).
test('strait verify: connectivity and service discovery with pod traffic in the default world', () => {
  const r = s('verify', '--cluster', 'cluster-a', '--tocluster', 'cluster-b', '-o', 'json');
  assert.equal(r.status, 0, r.stderr + r.stdout);
  const out = JSON.parse(r.stdout) as { passed: boolean; checks: { check: string; name: string; from: string; to: string; result: string; detail: string }[] };
  assert.equal(out.passed, true);
  const names = out.checks.map(
    (c) => `${c.check}: ${c.name.replace(/strait-verify-[0-9a-f]+/, 'SVC').replace(/ [0-9.]+:\d+$/, '')} ${c.from.split('/')[0]}->${c.to.split('/')[0]}`,
  );
  assert.deepEqual(names, [
    'connectivity: gateway connection cluster-a->cluster-b',
    'connectivity: pod to pod cluster-a->cluster-b',
    'connectivity: pod to service cluster-a->cluster-b',
    'connectivity: gateway connection cluster-b->cluster-a',
    'connectivity: pod to pod cluster-b->cluster-a',
    'connectivity: pod to service cluster-b->cluster-a',
    'service-discovery: service default/SVC gets a ClusterIP cluster-b->cluster-b',
    'service-discovery: ServiceExport Valid=True cluster-b->cluster-b',
    'service-discovery: dig SVC.default.svc.clusterset.local cluster-a->cluster-b',
    'service-discovery: dig cluster-b.SVC.default.svc.clusterset.local cluster-a->cluster-b',
    'service-discovery: curl SVC.default.svc.clusterset.local:8080 cluster-a->cluster-b',
    'service-discovery: unexport: dig SVC.default.svc.clusterset.local cluster-a->cluster-b',
  ]);
  const clientA = world
    .record()
    .clusters.find((c) => c.name === 'cluster-a')!
    .pods.find((p) => p.name === 'client')!.ip;
  assert.match(out.checks[1]!.detail, new RegExp(`source seen ${clientA.replace(/\./g, '\\.')} \\(the client pod\\)`));
  // the throw-away service is gone again
  assert.doesNotMatch(s('get', 'services', '-n', 'default', '--cluster', 'cluster-b').stdout, /strait-verify-/);
  const text = s('verify', '--only', 'connectivity');
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^CHECK +NAME +FROM +TO +RESULT +TIME +DETAIL\n/);
  assert.match(text.stdout, /6 of 6 checks passed/);
  const bad = s('verify', '--tocluster', 'cluster-a');
  assert.equal(bad.status, 2, bad.stderr);
});
