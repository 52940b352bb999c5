// The local world (docs/world.md). One private world per test file
// (temp state dir), so files run in parallel.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { alive, hostNetworkState, isWorldLinkName, upWorld, waitGone, worldPids, strait, type TestWorld } from '../helpers/world.js';

let world: TestWorld;
let hostBefore: ReturnType<typeof hostNetworkState>;

before(() => {
  hostBefore = hostNetworkState();
  world = upWorld();
});
after(() => world?.cleanup());

const podIP = (cluster: string, name: string): string =>
  world
    .record()
    .clusters.find((c) => c.name === cluster)
    ?.pods.find((p) => p.name === name)?.ip ?? 'missing';

test('curl from the client pod reaches echo by its cluster DNS name; echo sees the client pod IP', () => {
  const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', 'http://echo.default.svc.cluster.local:8080/hello']);
  assert.equal(r.status, 0, r.stderr);
  const body = JSON.parse(r.stdout);
  assert.equal(body.remoteAddress, podIP('cluster-a', 'client'));
  assert.equal(body.cluster, 'cluster-a');
  assert.equal(body.namespace, 'default');
  assert.match(body.pod, /^echo-/);
  assert.equal(body.path, '/hello');
  assert.equal(body.method, 'GET');
  assert.equal(body.host, 'echo.default.svc.cluster.local:8080');
});

test("one pod runtime serves every echo pod, each from a socket inside that pod's own network namespace", () => {
  const rec = world.record() as ReturnType<TestWorld['record']> & { components: { name: string; pid?: number }[] };
  const sup = String(rec.supervisorPid);
  const echos = rec.clusters.flatMap((c) => c.pods.filter((p) => p.name.startsWith('echo')));
  // default/echo in each cluster, plus mesh/echo (with its sidecar) in cluster-a
  assert.equal(echos.length, rec.clusters.length + 1);
  assert.deepEqual(
    rec.components.filter((c) => /echo/.test(c.name)),
    [],
    'no process per echo pod',
  );
  assert.ok(rec.components.some((c) => c.name === 'pod-runtime' && c.pid));
  const listening = (netns: string | undefined): string => {
    const args = netns ? ['-t', sup, '-m', '-n', 'ip', 'netns', 'exec', netns, 'ss', '-Hltn'] : ['-t', sup, '-n', 'ss', '-Hltn'];
    const r = spawnSync('nsenter', args, { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  for (const p of echos) assert.match(listening(p.netns), /0\.0\.0\.0:8080\s/, `${p.netns} listens on 8080`);
  // not in the world root, where the runtime process itself runs (the control module's API
  // listens on 8080 there, so look at the owner), nor on the client's node
  const runtimePid = rec.components.find((c) => c.name === 'pod-runtime')?.pid;
  const rootOwners = spawnSync('nsenter', ['-t', sup, '-n', 'ss', '-Hltnp', 'sport = :8080'], { encoding: 'utf8' }).stdout;
  assert.doesNotMatch(rootOwners, new RegExp(`pid=${runtimePid},`), 'the pod runtime has no 8080 listener in the world root');
  const client = rec.clusters[0]?.pods.find((p) => p.name === 'client');
  assert.doesNotMatch(listening(client?.netns), /:8080\s/);
  // a pod's server answers only in its own namespace: the client pod's own 8080 refuses
  const self = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '3', 'http://127.0.0.1:8080/']);
  assert.equal(self.status, 7, 'connection refused');
  // and the echo pod answers on its own loopback, seeing 127.0.0.1 (the peer in that namespace)
  const echoA = rec.clusters[0]?.pods.find((p) => p.name.startsWith('echo'));
  const lo = spawnSync('nsenter', ['-t', sup, '-m', '-n', 'ip', 'netns', 'exec', echoA?.netns ?? '', 'curl', '-s', '-m', '3', 'http://127.0.0.1:8080/'], {
    encoding: 'utf8',
  });
  assert.equal(JSON.parse(lo.stdout).remoteAddress, '127.0.0.1');
  assert.equal(JSON.parse(lo.stdout).pod, echoA?.name);
});

test('the ClusterIP works directly (nftables DNAT), and the short name through the search path', () => {
  const svc = world
    .record()
    .clusters.find((c) => c.name === 'cluster-b')
    ?.services.find((s) => s.name === 'echo');
  assert.ok(svc?.clusterIP);
  const r = world.exec('cluster-b/default/client', ['curl', '-s', '-m', '5', `http://${svc.clusterIP}:8080/`]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).remoteAddress, podIP('cluster-b', 'client'));
  assert.equal(JSON.parse(r.stdout).cluster, 'cluster-b');
  const short = world.exec('cluster-b/default/client', ['curl', '-s', '-m', '5', 'http://echo:8080/']);
  assert.equal(short.status, 0, short.stderr);
  assert.equal(JSON.parse(short.stdout).remoteAddress, podIP('cluster-b', 'client'));
});

test('dig: A record with TTL 5, NXDOMAIN for unknown names', () => {
  const a = world.exec('cluster-a/default/client', ['dig', '+noall', '+answer', 'echo.default.svc.cluster.local']);
  assert.equal(a.status, 0, a.stderr);
  const svc = world.record().clusters[0]?.services.find((s) => s.name === 'echo');
  assert.match(a.stdout, new RegExp(`^echo\\.default\\.svc\\.cluster\\.local\\.\\s+5\\s+IN\\s+A\\s+${svc?.clusterIP?.replace(/\./g, '\\.')}$`, 'm'));
  const nx = world.exec('cluster-a/default/client', ['dig', 'nope.default.svc.cluster.local']);
  assert.match(nx.stdout, /status: NXDOMAIN/);
  const tcp = world.exec('cluster-a/default/client', ['dig', '+tcp', '+short', 'kube-dns.kube-system.svc.cluster.local']);
  assert.equal(tcp.stdout.trim(), world.record().clusters[0] && (world.record().clusters[0] as { dnsIP?: string }).dnsIP);
});

test('strait exec passes exit codes, stdin and stdout through', () => {
  assert.equal(world.exec('cluster-a/default/client', ['false']).status, 1);
  assert.equal(world.exec('cluster-a/default/client', ['sh', '-c', 'exit 7']).status, 7);
  assert.equal(world.exec('cluster-a/default/client', ['sh', '-c', 'kill -TERM $$']).status, 143, 'killed by SIGTERM: 128 + 15');
  const cat = world.exec('cluster-a/default/client', ['cat'], 'through stdin\n');
  assert.equal(cat.stdout, 'through stdin\n');
  const err = world.exec('cluster-a/default/client', ['sh', '-c', 'echo oops >&2']);
  assert.equal(err.stderr, 'oops\n');
  const resolv = world.exec('cluster-a/default/client', ['cat', '/etc/resolv.conf']);
  assert.match(resolv.stdout, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local$/m);
  assert.match(resolv.stdout, /^nameserver 100\.1\.0\.10$/m);
});

test('strait exec names a missing pod or cluster with its error code', () => {
  const pod = world.exec('cluster-a/default/nope', ['true']);
  assert.equal(pod.status, 3);
  assert.match(pod.stderr, /STRAIT_ERR_POD_NOT_FOUND.*"cluster-a\/default\/nope"/);
  const cluster = world.exec('cluster-z/default/client', ['true']);
  assert.equal(cluster.status, 3);
  assert.match(cluster.stderr, /STRAIT_ERR_CLUSTER_UNKNOWN/);
});

test('across clusters through the tunnel: pod IP and remote ClusterIP, the remote echo sees the client pod IP', () => {
  const remoteEcho = world.record().clusters[1]?.pods.find((p) => p.name.startsWith('echo'))?.ip;
  const remoteSvc = world.record().clusters[1]?.services.find((s) => s.name === 'echo')?.clusterIP;
  for (const target of [remoteEcho, remoteSvc]) {
    const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', `http://${target}:8080/`]);
    assert.equal(r.status, 0, `${target}: ${r.stderr}`);
    const body = JSON.parse(r.stdout);
    assert.equal(body.cluster, 'cluster-b');
    assert.equal(body.remoteAddress, podIP('cluster-a', 'client'), 'source address preserved end to end');
  }
  // and the gateways report the connection
  const rec = world.record() as ReturnType<TestWorld['record']> & { components: { name: string; metrics?: string }[] };
  const gw = rec.components.find((c) => c.name === 'cluster-a.gateway.gateway');
  assert.ok(gw?.metrics);
  const records = spawnSync('nsenter', ['-t', String(rec.supervisorPid), '-n', 'curl', '-sf', `http://${gw.metrics}/records`], { encoding: 'utf8' });
  assert.match(records.stdout, /"status":"connected"/);
});

test('the code-hosting server answers every pod at http://198.18.0.1:3000', () => {
  for (const pod of ['cluster-a/default/client', 'cluster-b/default/client']) {
    const r = world.exec(pod, ['curl', '-sf', '-m', '5', 'http://198.18.0.1:3000/api/v1/version']);
    assert.equal(r.status, 0, `${pod}: ${r.stderr}`);
    assert.match(JSON.parse(r.stdout).version, /\+strait$/);
  }
});

test('the world is private: the host sees none of its namespaces or interfaces while it runs', () => {
  const now = hostNetworkState();
  const rec = world.record();
  const names = rec.clusters.flatMap((c) => [...c.nodes.map((n) => n.netns), ...c.pods.map((p) => p.netns)]);
  for (const n of names) assert.ok(!now.netns.includes(n), `host sees netns ${n}`);
  // the same names exist inside the world: the check above is not vacuous
  const inside = spawnSync('nsenter', ['-t', String(rec.supervisorPid), '-m', '-n', 'sh', '-c', 'ip netns list; ip -o link'], { encoding: 'utf8' }).stdout;
  for (const n of names) assert.match(inside, new RegExp(`^${n.replace(/\./g, '\\.')}( |$)`, 'm'));
  for (const l of ['inet0', 'ul0', 'ul1', 'c0n0', 'c1g0']) {
    assert.match(inside, new RegExp(`^\\d+: ${l}[@:]`, 'm'), `world has link ${l}`);
    assert.ok(!now.links.includes(l) || hostBefore.links.includes(l), `host sees link ${l}`);
  }
});

test('status -o json describes the running world', () => {
  const r = strait(['status', '-o', 'json', '--state-dir', world.stateDir]);
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  assert.equal(s.status, 'ready');
  assert.deepEqual(
    s.clusters.map((c: { name: string }) => c.name),
    ['cluster-a', 'cluster-b'],
  );
  assert.equal(s.clusters[0].clusterCIDR, '10.1.0.0/16');
  assert.equal(s.clusters[1].serviceCIDR, '100.2.0.0/16');
  assert.ok(s.components.every((c: { ready: boolean }) => c.ready));
});

test('promtool accepts the metrics of every long-running process of the world', () => {
  const rec = world.record() as ReturnType<TestWorld['record']> & { metrics: string };
  // every echo pod serves its own /metrics on its pod IP (from the one pod runtime process)
  const echoPods = rec.clusters.flatMap((c) => c.pods.filter((p) => p.name.startsWith('echo')).map((p) => `${p.ip}:9464`));
  const targets = [...new Set([rec.metrics, ...rec.components.map((c) => c.metrics), ...echoPods])];
  assert.ok(
    rec.components.every((c) => c.metrics),
    `every component names its metrics: ${JSON.stringify(rec.components)}`,
  );
  assert.ok(targets.length >= 8, `supervisor, 2 echo pods, 2 gateways, 2 agents, githost: ${targets}`);
  for (const target of targets) {
    const scrape = spawnSync('nsenter', ['-t', String(rec.supervisorPid), '-n', 'curl', '-sf', `http://${target}/metrics`], { encoding: 'utf8' });
    assert.equal(scrape.status, 0, `${target}: ${scrape.stderr}`);
    assert.match(scrape.stdout, /^# TYPE strait_\w+ (counter|gauge|histogram|summary)$/m, `${target} serves strait metrics`);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: scrape.stdout, encoding: 'utf8' });
    assert.equal(check.status, 0, `${target}: ${check.stdout}${check.stderr}`);
  }
});

test("the world's code-hosting server is reachable from the host on loopback", async () => {
  const rec = world.record() as ReturnType<TestWorld['record']> & { githost?: string };
  assert.match(rec.githost ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, 'status -o json reports githost');
  const res = await fetch(`${rec.githost}/api/v1/version`);
  assert.equal(res.status, 200);
  assert.match(String(((await res.json()) as { version?: string }).version), /\d/);
  // a missing user answers Gitea's 404 through the relay too
  assert.equal((await fetch(`${rec.githost}/api/v1/users/nobody-here`)).status, 404);
});

test('a second `strait up` on the same state dir is refused', () => {
  const r = strait(['up', '--detach', '--state-dir', world.stateDir]);
  assert.equal(r.status, 4);
  assert.match(r.stderr, /STRAIT_ERR_WORLD_RUNNING/);
});

test('strait down: every process is gone and the host network is as before', async () => {
  const rec = world.record();
  const pids = worldPids(rec.supervisorPid);
  assert.ok(pids.length >= 3, `world processes: ${pids}`);
  const r = world.down();
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(await waitGone([rec.pid, ...pids]), []);
  const after = hostNetworkState();
  assert.deepEqual(
    after.netns.filter((n) => !hostBefore.netns.includes(n)).filter((n) => /^cluster-/.test(n)),
    [],
  );
  assert.deepEqual(after.links.filter((l) => !hostBefore.links.includes(l)).filter(isWorldLinkName), []);
  const status = strait(['status', '--state-dir', world.stateDir]);
  assert.equal(status.status, 5);
  assert.match(status.stderr, /STRAIT_ERR_WORLD_NOT_RUNNING/);
  assert.ok(!alive(rec.supervisorPid));
});
