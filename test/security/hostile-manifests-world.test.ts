// Hostile manifests end to end in a local world (`strait up`), through the real entry
// points an attacker reaches: the store API (a token holder, any process of the world)
// and GitOps (whoever can push to a repository an Application follows), and `strait
// apply`. Every path validates the same way before anything is stored or rendered:
//   - a Service whose spec.clusterIP smuggles nft syntax (a chain on every node, before);
//   - a DestinationRule with `host: 5` (crashed mesh policy resolution, so a later STRICT
//     PeerAuthentication was never enforced: plaintext got 200, fail-open);
//   - a Service with `ports: "x"` (the cluster sync retried forever, later Services got
//     no rules and no DNS);
//   - a Service that takes another one's ClusterIP (nft failed every 250 ms after it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import { connectStoreFromFiles, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { createGpgWorld, createRepo, type GpgWorld } from '../helpers/signed-repo.js';
import { strait, upWorld, type TestWorld } from '../helpers/world.js';

let world: TestWorld;
let gpg: GpgWorld;
let store: ResourceStore;

before(() => {
  world = upWorld();
  const rec = world.record() as unknown as { store: { socket: string; token: string } };
  store = connectStoreFromFiles({ socketPath: rec.store.socket, tokenFile: rec.store.token, cluster: 'cluster-a' });
});
after(async () => {
  await store?.close();
  world?.cleanup();
  gpg?.cleanup();
});

// closes the no-endpoint set, adds a base chain "evil", opens a set that swallows the rest
const CRAFTED_IP =
  '100.1.0.99 . tcp . 1 }\n  }\n  chain evil {\n    type filter hook input priority 0; policy accept;\n  }\n  set pad {\n' +
  '    type ipv4_addr . inet_proto . inet_service\n    elements = { 100.1.0.98';

/** `nft list table ip strait-proxy` in each node of cluster-a */
function proxyTables(): string[] {
  const r = world.record();
  const a = r.clusters.find((c) => c.name === 'cluster-a')!;
  return a.nodes.map(
    (n) =>
      spawnSync(
        'nsenter',
        ['-t', String(r.supervisorPid), '-m', '--', 'nsenter', `--net=/run/netns/${n.netns}`, '--', 'nft', 'list', 'table', 'ip', 'strait-proxy'],
        { encoding: 'utf8' },
      ).stdout,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function eventually<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'stored',
    (e: unknown) => (isStraitError(e) ? e.code : String(e)),
  );
const svc = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec,
});

test('store API: a Service with a crafted clusterIP is refused and no nft chain appears on any node', async () => {
  // outcomes first, then the refusal: run against the code before the fix, this fails on the chain itself
  const code = await codeOf(store.apply(svc('evil-api', { clusterIP: CRAFTED_IP, ports: [{ port: 80 }] })));
  // a valid Service applied afterwards is programmed: the proxy table was rebuilt after the attempt
  await store.apply(svc('after-api', { ports: [{ port: 81 }] }));
  const tables = await eventually("after-api in every node's proxy table", () => {
    const t = proxyTables();
    return t.every((x) => / \. tcp \. 81\b/.test(x)) ? t : undefined;
  });
  for (const t of tables) assert.doesNotMatch(t, /chain evil/);
  assert.equal(code, 'STRAIT_ERR_OBJECT_INVALID');
  assert.equal(await store.get(Kinds.Service, 'evil-api', 'default'), undefined);
});

test('GitOps: a revision with a crafted clusterIP is refused as a whole, named in the Application, and no nft chain appears', async () => {
  gpg = createGpgWorld();
  const repo = createRepo(gpg);
  repo.commit(
    {
      'app/ok.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-git}\ndata: {a: b}\n',
      'app/svc.yaml': `${JSON.stringify(svc('evil-git', { clusterIP: CRAFTED_IP, ports: [{ port: 80 }] }))}\n`,
    },
    'crafted',
  );
  const v = `${GROUPS.gitops}/v1alpha1`;
  await store.apply({
    apiVersion: v,
    kind: 'AppProject',
    metadata: { name: 'hostile', namespace: 'argocd' },
    spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }] },
  });
  await store.apply({
    apiVersion: v,
    kind: 'Application',
    metadata: { name: 'hostile', namespace: 'argocd' },
    spec: {
      project: 'hostile',
      source: { repoURL: repo.dir, path: 'app', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'default' },
      syncPolicy: { automated: { prune: true } },
    },
  });
  const cond = await eventually(
    'the Application to report the invalid manifest',
    async () => {
      const app = await store.get<KubeObject & { status?: { conditions?: { type: string; reason?: string; message?: string }[] } }>(
        Kinds.Application,
        'hostile',
        'argocd',
      );
      return app?.status?.conditions?.find((c) => c.type === 'ComparisonError');
    },
    30_000,
  );
  assert.equal(cond.reason, 'ManifestInvalid');
  assert.match(
    cond.message ?? '',
    /^app\/svc\.yaml document 1: spec\.clusterIP: must be an IPv4 address, "None" \(headless\) or empty \(got "100\.1\.0\.99 \. tcp/,
  );
  assert.equal(await store.get(Kinds.Service, 'evil-git', 'default'), undefined, 'the Service was not stored');
  assert.equal(await store.get(Kinds.ConfigMap, 'from-git', 'default'), undefined, 'nothing of the revision was applied');
  for (const t of proxyTables()) assert.doesNotMatch(t, /chain evil/);
});

test('a DestinationRule with host: 5 is refused; a STRICT PeerAuthentication applied after it is enforced (plaintext: curl exit 56)', async () => {
  const outsider = () => {
    const r = world.exec('cluster-a/mesh/outsider', [
      'curl',
      '-sS',
      '-m',
      '5',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      'http://echo.mesh.svc.cluster.local:8080/',
    ]);
    return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
  };
  // PERMISSIVE to start with (the sidecars may still be starting)
  await eventually('plaintext to pass while PERMISSIVE', () => (outsider() === 'HTTP 200' ? true : undefined), 20_000);
  const dr = { apiVersion: `networking.${GROUPS.mesh}/v1beta1`, kind: 'DestinationRule', metadata: { name: 'crash', namespace: 'mesh' }, spec: { host: 5 } };
  const code = await codeOf(store.apply(dr as unknown as KubeObject));
  const a = strait(
    ['apply', '-f', '-', '--state-dir', world.stateDir],
    'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: STRICT}}\n',
  );
  assert.equal(a.status, 0, a.stderr);
  const seen = await eventually(
    'plaintext to be refused',
    () => {
      const o = outsider();
      return o === 'exit 56' ? o : undefined;
    },
    20_000,
  ).catch(() => outsider());
  assert.equal(seen, 'exit 56');
  assert.equal(code, 'STRAIT_ERR_OBJECT_INVALID');
  strait(['delete', 'peerauthentication', 'default', '-n', 'mesh', '--state-dir', world.stateDir]);
});

test('a Service with ports: "x" is refused, and a valid Service applied after it gets its ClusterIP rule and its DNS name', async () => {
  const code = await codeOf(store.apply(svc('bad-ports', { selector: { app: 'echo' }, ports: 'x' })));
  await store.apply(svc('good-after', { selector: { app: 'echo' }, ports: [{ port: 8081, targetPort: 8080 }] }));
  const body = await eventually(
    'good-after to answer through its DNS name',
    () => {
      const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '2', 'http://good-after.default.svc.cluster.local:8081/']);
      return r.status === 0 ? r.stdout : undefined;
    },
    30_000,
  );
  assert.equal((JSON.parse(body) as { namespace: string }).namespace, 'default');
  assert.equal(code, 'STRAIT_ERR_OBJECT_INVALID');
});

test("strait apply: a Service that takes another Service's ClusterIP is refused as the API server refuses it; later Services still route", async () => {
  const echo = await store.get<KubeObject & { spec: { clusterIP: string } }>(Kinds.Service, 'echo', 'default');
  const ip = echo!.spec.clusterIP;
  const dup = strait(
    ['apply', '-f', '-', '--state-dir', world.stateDir],
    `apiVersion: v1\nkind: Service\nmetadata: {name: dup, namespace: default}\nspec: {clusterIP: ${ip}, selector: {app: echo}, ports: [{port: 8080}]}\n`,
  );
  // a given ClusterIP outside the service CIDR is refused too
  const outside = strait(
    ['apply', '-f', '-', '--state-dir', world.stateDir],
    'apiVersion: v1\nkind: Service\nmetadata: {name: outside, namespace: default}\nspec: {clusterIP: 10.9.9.9, ports: [{port: 80}]}\n',
  );
  const later = strait(
    ['apply', '-f', '-', '--state-dir', world.stateDir],
    'apiVersion: v1\nkind: Service\nmetadata: {name: later, namespace: default}\nspec: {selector: {app: echo}, ports: [{port: 8083, targetPort: 8080}]}\n',
  );
  assert.equal(later.status, 0, later.stderr);
  await eventually(
    'later to answer through its DNS name',
    () => {
      const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '2', 'http://later.default.svc.cluster.local:8083/']);
      return r.status === 0 ? true : undefined;
    },
    30_000,
  );
  assert.equal(dup.status, 2, dup.stdout);
  assert.equal(
    dup.stderr,
    `error STRAIT_ERR_OBJECT_INVALID: Service "default/dup": spec.clusterIP: provided IP is already allocated (to Service default/echo); leave clusterIP out to get a free one (got "${ip}")\n`,
  );
  assert.equal(outside.status, 2);
  assert.match(outside.stderr, /provided IP is not in the valid range; the range of valid IPs is 100\.1\.0\.0\/16/);
});
