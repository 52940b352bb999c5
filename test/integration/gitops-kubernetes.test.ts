// Signed GitOps in Kubernetes mode (docs/kubernetes.md), against a real kube-apiserver: the GitOps controller runs
// unchanged on the Kubernetes store. An enforcing AppProject with an unsigned revision
// gives the Application Sync Error / "Revision is not signed" and a ResourceComparison
// Event (read back with kubectl); a signed revision creates the objects.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { GitOpsController, type Application } from '../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../src/platform/resources/index.js';
import { openKubernetesStore, type KubernetesResourceStore } from '../../src/platform/store/index.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';
import { installCrds } from '../k8s/store-harness.js';

const NS = 'argocd';
const API = `${GROUPS.gitops}/v1alpha1`;
let cluster: TestCluster | undefined;
let skip: string | undefined;
let store: KubernetesResourceStore;
let controller: GitOpsController | undefined;
let world: GpgWorld | undefined;
let repo: TestRepo;
let stateDir: string | undefined;
const commits: Record<string, string> = {};

const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  value: ${value}\n`;

before(
  async () => {
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
    installCrds(cluster);
    world = createGpgWorld();
    repo = createRepo(world);
    commits['unsigned'] = repo.commit({ 'app/cm.yaml': cm('unsigned') }, 'unsigned');
    commits['alice'] = repo.commit({ 'app/cm.yaml': cm('alice') }, 'alice', world.keys.alice);
    store = openKubernetesStore({ kubeconfig: cluster.kubeconfig });
    await store.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await store.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: GPG_KEYS_CM, namespace: NS },
      data: { [world.keys.alice.keyID]: world.keys.alice.armored },
    });
    await store.apply({
      apiVersion: API,
      kind: 'AppProject',
      metadata: { name: 'secure', namespace: NS },
      spec: {
        sourceRepos: ['*'],
        destinations: [{ server: '*', namespace: '*' }],
        clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
        signatureKeys: [{ keyID: world.keys.alice.keyID }],
      },
    });
    stateDir = mkdtempSync(join(tmpdir(), 'strait-gitops-k8s-'));
    controller = new GitOpsController({ store, namespace: NS, stateDir, pollIntervalMs: 3_600_000, waitingRetryMs: 200 });
    await controller.start();
  },
  { timeout: 3_600_000 },
);

after(async () => {
  await controller?.stop();
  await store?.close();
  world?.cleanup();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  await cluster?.stop();
});

async function app(name: string, revision: string, ns: string): Promise<void> {
  await store.apply({
    apiVersion: API,
    kind: 'Application',
    metadata: { name, namespace: NS },
    spec: {
      project: 'secure',
      source: { repoURL: repo.dir, path: 'app', targetRevision: revision },
      destination: { server: 'https://kubernetes.default.svc', namespace: ns },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
}

const status = (name: string, want: string): Promise<Application> =>
  waitFor(
    async () => {
      const a = await store.get<Application>(Kinds.Application, name, NS);
      return a?.status?.sync?.status === want ? a : undefined;
    },
    30_000,
    `${name}: ${want}`,
  );

test('unsigned revision under an enforcing AppProject: Sync Error, "Revision is not signed", ResourceComparison Event, nothing applied', async (t) => {
  if (!cluster) return t.skip(skip);
  await app('unsigned', commits['unsigned']!, 'ns-unsigned');
  const a = await status('unsigned', 'Sync Error');
  assert.equal(a.status?.operationState?.message, 'Revision is not signed');
  // the Event is recorded beside the status patch, not before it: wait for it to show
  type EventList = { items: { type: string; involvedObject: { kind: string } }[] };
  const c = cluster;
  const items = await waitFor(
    () => {
      const ev = c.kubectl(['get', 'events', '-n', NS, '--field-selector', 'reason=ResourceComparison,involvedObject.name=unsigned', '-o', 'json']);
      assert.equal(ev.status, 0, ev.stderr);
      const list = (JSON.parse(ev.stdout) as EventList).items;
      return list.length > 0 ? list : undefined;
    },
    15_000,
    'ResourceComparison Event',
  );
  assert.equal(items.length, 1, JSON.stringify(items));
  assert.equal(items[0]?.type, 'Warning');
  assert.equal(items[0]?.involvedObject.kind, 'Application');
  assert.notEqual(cluster.kubectl(['get', 'configmap', 'demo', '-n', 'ns-unsigned']).status, 0, 'nothing applied');
});

test('a revision signed by a listed, imported key syncs: the objects exist in the API server', async (t) => {
  if (!cluster) return t.skip(skip);
  await app('signed', commits['alice']!, 'ns-signed');
  const a = await status('signed', 'Synced');
  assert.equal(a.status?.signature?.status, 'valid');
  const r = cluster.kubectl(['get', 'configmap', 'demo', '-n', 'ns-signed', '-o', 'jsonpath={.data.value}']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'alice');
});
