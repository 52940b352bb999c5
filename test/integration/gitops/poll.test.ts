// GitOps (docs/gitops.md): without any push notification, the polling interval picks up a new signed
// revision on the tracked branch.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { GitOpsController, type Application } from '../../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../../helpers/signed-repo.js';
import { waitFor } from '../../helpers/wait.js';

let world: GpgWorld;
let repo: TestRepo;
let store: ResourceStore;
let controller: GitOpsController;
let dir: string;
const cm = (v: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: polled}\ndata: {v: "${v}"}\n`;

before(async () => {
  world = createGpgWorld();
  repo = createRepo(world);
  repo.commit({ 'app/cm.yaml': cm('1') }, 'one', world.keys.bob);
  dir = mkdtempSync(join(tmpdir(), 'strait-poll-'));
  store = tempEmbeddedStore();
  const api = `${GROUPS.gitops}/v1alpha1`;
  await store.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GPG_KEYS_CM, namespace: 'argocd' },
    data: { [world.keys.bob.keyID]: world.keys.bob.armored },
  });
  await store.apply({
    apiVersion: api,
    kind: 'AppProject',
    metadata: { name: 'p', namespace: 'argocd' },
    spec: { sourceRepos: ['*'], destinations: [{ server: '*', namespace: '*' }], signatureKeys: [{ keyID: world.keys.bob.keyID }] },
  });
  await store.apply({
    apiVersion: api,
    kind: 'Application',
    metadata: { name: 'polled', namespace: 'argocd' },
    spec: {
      project: 'p',
      source: { repoURL: repo.dir, path: 'app', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'default' },
      syncPolicy: { automated: {} },
    },
  });
  controller = new GitOpsController({ store, namespace: 'argocd', stateDir: dir, pollIntervalMs: 1500 });
  await controller.start();
});

after(async () => {
  await controller?.stop();
  await store?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const live = async (): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'polled', 'default'))?.data?.['v'];

test('a new signed commit is synced by the next poll', async () => {
  await waitFor(async () => (await live()) === '1', 10_000, 'first sync');
  const sha = repo.commit({ 'app/cm.yaml': cm('2') }, 'two', world.keys.bob);
  await waitFor(async () => (await live()) === '2', 10_000, 'polled sync');
  // the status is written after the objects are applied: wait for it too
  const revision = await waitFor(
    async () => {
      const r = (await store.get<Application>(Kinds.Application, 'polled', 'argocd'))?.status?.sync?.revision;
      return r === sha ? r : undefined;
    },
    10_000,
    'the status of the polled sync',
  );
  assert.equal(revision, sha);
});
