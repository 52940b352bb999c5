// Issue 5 acceptance in the local world (`strait up`): SPEC.md's traffic table with the real
// curl through `strait exec`, for each mode applied as the default PeerAuthentication of
// the server's namespace: in-mesh client, out-of-mesh client, host through the ingress.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { strait, upWorld, type TestWorld } from '../helpers/world.js';

let world: TestWorld;
before(() => { world = upWorld(); });
after(() => world?.cleanup());

const URL_ = 'http://echo.mesh.svc.cluster.local:8080/';
const curlFrom = (pod: string) => {
  const r = world.exec(`cluster-a/mesh/${pod}`, ['curl', '-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', URL_]);
  return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
};
const ingressURL = (): string => {
  const url = (world.record().clusters.find((c) => c.name === 'cluster-a') as { ingress?: string } | undefined)?.ingress;
  assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, 'strait status reports the ingress host URL of cluster-a');
  return url as string;
};
// the host (this test's namespace) through the loopback port `strait up` bound for the ingress gateway
const viaIngress = () => {
  const r = spawnSync('curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', `${ingressURL()}/`], { encoding: 'utf8' });
  return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
};
// and through the unix socket in the state dir
const viaSocket = () => {
  const r = spawnSync('curl', ['-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', '--unix-socket', join(world.stateDir, 'mesh', 'cluster-a', 'ingress.sock'), 'http://echo.mesh/'], { encoding: 'utf8' });
  return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
};
const until = (want: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end && !want()) spawnSync('sleep', ['0.1']);
};

const SETUPS: Record<string, string> = {
  PERMISSIVE: 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: PERMISSIVE}}\n',
  DISABLE: 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: DISABLE}}\n---\napiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: default, namespace: mesh}\nspec: {host: "*", trafficPolicy: {tls: {mode: DISABLE}}}\n',
  STRICT: 'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: STRICT}}\n---\napiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: default, namespace: mesh}\nspec: {host: "*.mesh.svc.cluster.local", trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}\n',
};
const EXPECT: Record<string, string[]> = {
  PERMISSIVE: ['HTTP 200', 'HTTP 200', 'HTTP 200'],
  DISABLE: ['HTTP 200', 'HTTP 200', 'HTTP 200'],
  STRICT: ['HTTP 200', 'exit 56', 'HTTP 200'],
};

for (const mode of ['PERMISSIVE', 'DISABLE', 'STRICT']) {
  test(`traffic table, ${mode}: in-mesh client, outsider, ingress`, () => {
    strait(['delete', 'destinationrule', 'default', '-n', 'mesh', '--state-dir', world.stateDir]);
    const a = strait(['apply', '-f', '-', '--state-dir', world.stateDir], SETUPS[mode]);
    assert.equal(a.status, 0, a.stderr);
    const want = EXPECT[mode] as string[];
    until(() => curlFrom('outsider') === want[1] && curlFrom('client') === want[0]);
    assert.deepEqual([curlFrom('client'), curlFrom('outsider'), viaIngress()], want);
    assert.equal(viaSocket(), 'HTTP 200');
  });
}

test('the echo pod\'s sidecar counted the mTLS connections and the reset (metrics on 15020, promtool)', () => {
  const echo = world.record().clusters.find((c) => c.name === 'cluster-a')?.pods.find((p) => p.namespace === 'mesh' && p.name.startsWith('echo-'));
  assert.ok(echo?.ip);
  const r = world.exec('cluster-a/mesh/outsider', ['curl', '-sS', '-m', '5', `http://${echo.ip}:15020/metrics`]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /strait_mesh_inbound_accepted_total\{mode="STRICT",how="mtls"\} [1-9]/);
  assert.match(r.stdout, /strait_mesh_inbound_reset_total\{mode="STRICT",reason="plaintext"\} [1-9]/);
  const pt = spawnSync('promtool', ['check', 'metrics'], { input: r.stdout, encoding: 'utf8' });
  assert.equal(pt.status, 0, pt.stdout + pt.stderr);
});

test('strait mesh describe over the world', () => {
  const r = strait(['mesh', 'describe', 'cluster-a/mesh/client', '--state-dir', world.stateDir]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Sidecar:\s+yes/);
});
