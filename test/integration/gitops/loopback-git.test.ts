// GitOps (docs/gitops.md): the controller fetches over a loopback git server (real `git daemon` on
// 127.0.0.1), a signed push followed by a Gitea-style webhook syncs at once, and an
// unsigned push afterwards is refused while the synced state stays.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startGitOpsService, type Application, type GitOpsService } from '../../../src/gitops/control/index.js';
import { GPG_KEYS_CM, GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { listEvents } from '../../helpers/events.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { run } from '../../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../../helpers/signed-repo.js';
import { waitFor } from '../../helpers/wait.js';
import { freeTcpPort } from '../../helpers/free-port.js';

let world: GpgWorld;
let work: TestRepo;
let daemon: ChildProcess;
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
let url: string;

const cm = (v: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\ndata: {version: "${v}"}\n`;
const app = async (): Promise<Application> => (await store.get<Application>(Kinds.Application, 'web', 'argocd'))!;
const live = async (): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'web-config', 'web'))?.data?.['version'];

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-gitd-'));
  const base = join(dir, 'srv');
  mkdirSync(base);
  await run('git', ['init', '-q', '--bare', '-b', 'main', join(base, 'web.git')]);
  const port = await freeTcpPort();
  daemon = spawn(
    'git',
    ['daemon', '--reuseaddr', '--listen=127.0.0.1', `--port=${port}`, `--base-path=${base}`, '--export-all', '--enable=receive-pack', base],
    { stdio: 'ignore' },
  );
  url = `git://127.0.0.1:${port}/web.git`;
  work = createRepo(world, 'work');
  work.commit({ 'deploy/cm.yaml': cm('1') }, 'v1', world.keys.alice);
  await waitFor(
    async () => (await run('git', ['push', '-q', url, 'main'], { cwd: work.dir, env: world.env })).status === 0,
    10_000,
    'git daemon accepting pushes',
  );

  store = tempEmbeddedStore();
  await store.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: GPG_KEYS_CM, namespace: 'argocd' },
    data: { [world.keys.alice.keyID]: world.keys.alice.armored },
  });
  const api = `${GROUPS.gitops}/v1alpha1`;
  await store.apply({
    apiVersion: api,
    kind: 'AppProject',
    metadata: { name: 'web', namespace: 'argocd' },
    spec: {
      sourceRepos: ['git://127.0.0.1:*/*'],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'web' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      signatureKeys: [{ keyID: world.keys.alice.keyID }],
    },
  });
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, pollIntervalMs: 3_600_000 });
  await store.apply({
    apiVersion: api,
    kind: 'Application',
    metadata: { name: 'web', namespace: 'argocd' },
    spec: {
      project: 'web',
      source: { repoURL: url, path: 'deploy', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'web' },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
});

after(async () => {
  await svc?.close();
  await store?.close();
  daemon?.kill();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const webhook = (): Promise<{ status: number | null }> =>
  run('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '-X',
    'POST',
    `${svc.api.url}/api/webhook`,
    '-H',
    'content-type: application/json',
    '-H',
    'X-Gitea-Event: push',
    '-d',
    JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: url } }),
  ]);

test('a signed revision fetched over git:// is synced', async () => {
  await waitFor(async () => (await app()).status?.sync?.status === 'Synced', 15_000, 'Synced');
  assert.equal(await live(), '1');
  assert.match((await app()).status?.operationState?.syncResult?.signer ?? '', /Alice Tester <alice@example.com> \(/);
});

test('a signed push plus the webhook syncs at once; an unsigned push is refused and v2 stays', async () => {
  const v2 = work.commit({ 'deploy/cm.yaml': cm('2') }, 'v2', world.keys.alice);
  assert.equal((await run('git', ['push', '-q', url, 'main'], { cwd: work.dir, env: world.env })).status, 0);
  assert.equal((await webhook()).status, 0);
  await waitFor(async () => (await live()) === '2', 10_000, 'v2 live');
  assert.equal((await app()).status?.sync?.revision, v2);

  work.commit({ 'deploy/cm.yaml': cm('3-unsigned') }, 'v3 unsigned');
  assert.equal((await run('git', ['push', '-q', url, 'main'], { cwd: work.dir, env: world.env })).status, 0);
  await webhook();
  const a = await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.status === 'Sync Error' ? x : undefined;
    },
    10_000,
    'Sync Error',
  );
  assert.equal(a.status?.operationState?.message, 'Revision is not signed');
  assert.equal(await live(), '2', 'nothing applied from the unsigned revision');
  assert.ok((await listEvents(store)).some((e) => e.reason === 'ResourceComparison' && e.name === 'web'));
});
