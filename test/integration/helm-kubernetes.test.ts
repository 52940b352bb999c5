// The Helm chart's life cycle against a real kube-apiserver (no nodes: what is checked is the
// objects, their ownership and the CRDs, not running pods; the real-cluster suite runs pods):
// a kustomize install (`kubectl apply -k deploy/`) is refused by a plain `helm install` and
// adopted by `helm install --take-ownership --force-conflicts`; `helm upgrade` to a changed value and
// `helm rollback` change the daemons' configuration both ways; `helm uninstall` removes every
// object of the release and leaves no finalizer, and keeps the CRDs with the custom resources
// of other namespaces (docs/upgrades.md). Real Helm v4.3.1 (test/helm/build-helm.sh).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const chart = join(root, 'charts', 'strait');
const helmBin = join(execFileSync('bash', [join(root, 'test', 'helm', 'build-helm.sh'), '--print'], { encoding: 'utf8' }).trim(), 'helm');
const NS = 'strait-system';
let cluster: TestCluster | undefined;
let skip: string | undefined;

before(
  async () => {
    if (!existsSync(helmBin)) {
      skip = `helm is not built (${helmBin}); run test/helm/build-helm.sh (slow the first time)`;
      if (process.env['CI'] === 'true') throw new Error(`CI=true: ${skip}`);
      return;
    }
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
  },
  { timeout: 3_600_000 },
);

after(async () => {
  await cluster?.stop();
});

function helmRun(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const c = cluster!;
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(c.dir, 'helm-cache'),
    HELM_CONFIG_HOME: join(c.dir, 'helm-config'),
    HELM_DATA_HOME: join(c.dir, 'helm-data'),
  };
  return spawnSync(helmBin, ['--kubeconfig', c.kubeconfigPath, ...args], { encoding: 'utf8', env, timeout: 300_000 });
}
function helm(...args: string[]): string {
  const r = helmRun(...args);
  assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
function kubectl(...args: string[]): string {
  const r = cluster!.kubectl(args);
  assert.equal(r.status, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const agentConfig = (): { gateway: { address: string } } =>
  parse(kubectl('-n', NS, 'get', 'configmap', 'strait-config', '-o', 'jsonpath={.data.node-agent\\.yaml}')) as { gateway: { address: string } };
const gatewayConfig = (): { clusterId: string } =>
  parse(kubectl('-n', NS, 'get', 'configmap', 'strait-config', '-o', 'jsonpath={.data.gateway\\.yaml}')) as { clusterId: string };

// the namespaced and cluster-scoped kinds the chart renders (charts/strait/templates)
const KINDS = ['daemonsets', 'deployments', 'services', 'configmaps', 'serviceaccounts', 'roles', 'rolebindings'];
const CLUSTER_KINDS = ['clusterroles', 'clusterrolebindings', 'mutatingwebhookconfigurations'];
const straitObjects = (): string[] =>
  [
    ...KINDS.flatMap((k) =>
      kubectl(
        'get',
        k,
        '-A',
        '-l',
        'app.kubernetes.io/part-of=strait',
        '-o',
        'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
      ).split('\n'),
    ),
    ...CLUSTER_KINDS.flatMap((k) =>
      kubectl('get', k, '-l', 'app.kubernetes.io/part-of=strait', '-o', 'jsonpath={range .items[*]}{.kind}/{.metadata.name}{"\\n"}{end}').split('\n'),
    ),
  ]
    .filter(Boolean)
    .sort();

test('kustomize install adopted by helm install --take-ownership; helm upgrade and rollback change the configuration; helm uninstall leaves no object of the release, no finalizer, the CRDs and the custom resources', {
  timeout: 900_000,
}, async (t) => {
  if (skip) {
    t.skip(skip);
    return;
  }
  const t0 = Date.now();
  // 1. installed the way it could be before the chart: kubectl apply -k deploy/ (CRDs first)
  // kubectl prints no warning for strait's CRDs or objects (no deprecated version, no unknown field)
  for (const args of [
    ['apply', '--server-side', '-f', join(root, 'deploy', 'crds.yaml')],
    ['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s'],
    ['apply', '--server-side', '-k', join(root, 'deploy')],
  ]) {
    const r = cluster!.kubectl(args);
    assert.equal(r.status, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /warning/i, `kubectl ${args.join(' ')}`);
  }
  const before = straitObjects();
  assert.ok(before.length > 20, before.join(' '));
  // a custom resource of a user, in another namespace
  const se = cluster!.kubectl(
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'echo', namespace: 'default' } }),
  );
  assert.equal(se.status, 0, se.stderr);

  // 2. a plain helm install refuses objects it does not own, and says so
  const refused = helmRun('install', 'strait', chart, '-n', NS, '--create-namespace');
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /exists and cannot be imported into the current release: invalid ownership metadata/);
  // --take-ownership adopts them (the default values render the objects of deploy/); the fields
  // kubectl's server-side apply owns are taken over with --force-conflicts (without it Helm's own
  // server-side apply refuses every field kubectl set: the ConfigMap's data, the env fieldRefs)
  const tInstall = Date.now();
  helm('install', 'strait', chart, '-n', NS, '--create-namespace', '--take-ownership', '--force-conflicts', '--set', 'clusterId=cluster-k');
  console.log(`helm install --take-ownership over kubectl apply -k: ${Date.now() - tInstall} ms`);
  assert.deepEqual(straitObjects(), before, "the same objects, now the release's");
  for (const o of ['daemonset/strait-gateway', 'deployment/strait-control']) {
    assert.equal(kubectl('-n', NS, 'get', o, '-o', 'jsonpath={.metadata.annotations.meta\\.helm\\.sh/release-name}'), 'strait', o);
  }
  assert.equal(kubectl('get', 'namespace', NS, '-o', 'jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}'), 'privileged');
  assert.equal(gatewayConfig().clusterId, 'cluster-k');
  assert.equal(agentConfig().gateway.address, '192.0.2.1');

  // 3. upgrade to a changed value (the others kept), then roll back
  helm('upgrade', 'strait', chart, '-n', NS, '--reuse-values', '--set', 'gateway.address=10.9.9.9');
  assert.equal(agentConfig().gateway.address, '10.9.9.9');
  assert.equal(gatewayConfig().clusterId, 'cluster-k', '--reuse-values keeps clusterId');
  helm('rollback', 'strait', '1', '-n', NS);
  assert.equal(agentConfig().gateway.address, '192.0.2.1', 'rolled back');
  const history = JSON.parse(helm('history', 'strait', '-n', NS, '-o', 'json')) as { revision: number; status: string; description: string }[];
  assert.deepEqual(
    history.map((h) => [h.revision, h.status]),
    [
      [1, 'superseded'],
      [2, 'superseded'],
      [3, 'deployed'],
    ],
  );
  assert.match(history[2]!.description, /Rollback to 1/);

  // 4. uninstall: nothing of the release is left, and no finalizer holds anything back
  const tUninstall = Date.now();
  helm('uninstall', 'strait', '-n', NS);
  console.log(`helm uninstall: ${Date.now() - tUninstall} ms`);
  assert.deepEqual(straitObjects(), [], 'no object of the release left');
  // but the githost's claim (the repositories: helm.sh/resource-policy keep) while its namespace lives
  assert.equal(kubectl('-n', NS, 'get', 'pvc', 'strait-githost-data', '-o', 'jsonpath={.metadata.annotations.helm\\.sh/resource-policy}'), 'keep');
  // the namespaces the chart made are being deleted (no controller-manager here finishes it)
  for (const ns of [NS, 'submariner-operator']) {
    const r = cluster!.kubectl(['get', 'namespace', ns, '-o', 'jsonpath={.metadata.deletionTimestamp}']);
    assert.ok(r.status !== 0 || r.stdout !== '', `${ns} deleted or being deleted`);
    if (r.status === 0) assert.equal(kubectl('get', 'namespace', ns, '-o', 'jsonpath={.metadata.finalizers}'), '', `${ns}: no finalizer of strait's`);
  }
  // Helm never deletes crds/: the CRDs and the custom resources in other namespaces stay
  assert.equal(kubectl('get', 'crd', 'serviceexports.multicluster.x-k8s.io', '-o', 'jsonpath={.metadata.name}'), 'serviceexports.multicluster.x-k8s.io');
  assert.equal(kubectl('-n', 'default', 'get', 'serviceexport', 'echo', '-o', 'jsonpath={.metadata.name}'), 'echo');
  assert.equal(kubectl('-n', 'default', 'get', 'serviceexport', 'echo', '-o', 'jsonpath={.metadata.finalizers}'), '', "no finalizer on a user's object");
  console.log(`helm life cycle on a real kube-apiserver: ${Date.now() - t0} ms`);
});

test('the documented install into a cluster without strait: helm install --namespace strait-system --create-namespace (the chart labels the namespace privileged)', {
  timeout: 600_000,
}, async (t) => {
  if (skip) {
    t.skip(skip);
    return;
  }
  // the namespaces the previous test's uninstall deleted: no controller-manager runs here, so the
  // test finishes their deletion as the namespace controller would (nothing is left in them)
  for (const ns of [NS, 'submariner-operator']) {
    const r = cluster!.kubectl(['get', 'namespace', ns, '-o', 'json']);
    if (r.status !== 0) continue;
    const o = JSON.parse(r.stdout) as { spec: { finalizers?: string[] } };
    o.spec.finalizers = [];
    const f = cluster!.kubectl(['replace', '--raw', `/api/v1/namespaces/${ns}/finalize`, '-f', '-'], JSON.stringify(o));
    assert.equal(f.status, 0, f.stderr);
  }
  for (const ns of [NS, 'submariner-operator']) {
    const deadline = Date.now() + 60_000;
    while (cluster!.kubectl(['get', 'namespace', ns]).status === 0) {
      assert.ok(Date.now() < deadline, `${ns} still there`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  helm('install', 'strait', chart, '--namespace', NS, '--create-namespace', '--set', 'clusterId=cluster-n');
  assert.equal(kubectl('get', 'namespace', NS, '-o', 'jsonpath={.metadata.labels.pod-security\\.kubernetes\\.io/enforce}'), 'privileged');
  assert.equal(kubectl('get', 'namespace', 'submariner-operator', '-o', 'jsonpath={.metadata.annotations.meta\\.helm\\.sh/release-name}'), 'strait');
  assert.equal(gatewayConfig().clusterId, 'cluster-n');
  assert.ok(straitObjects().length > 20);
  helm('uninstall', 'strait', '-n', NS);
  assert.deepEqual(straitObjects(), []);
});
