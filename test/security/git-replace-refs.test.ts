// Attack: a collaborator with push access but no signing key pushes refs/replace/*
// to the code-hosting server. git honours replace refs when it reads objects, so a
// reader that fetches them (or runs where they are) sees the attacker's content under
// the names of signed objects. The controller must apply exactly the objects of the
// signed commit, and the code-hosting server's commit API must judge the commit that
// was asked for, not the commit a replace ref substitutes for it.
// Everything goes through the real entry points: git push over HTTP to githost, the
// controller syncing on githost's push notification, the commits API over HTTP.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startGitOpsService, type Application, type GitOpsService } from '../../src/gitops/control/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { api, startGithost, type Started } from '../helpers/githost.js';
import { run } from '../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';

let world: GpgWorld;
let gh: Started;
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
let alice: TestRepo;
let aliceURL: string;
let malloryURL: string;
let malloryDir: string;
let signedA = '';

const cm = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const app = async (): Promise<Application> => (await store.get<Application>(Kinds.Application, 'guestbook', 'argocd'))!;
const live = async (name: string): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, name, 'guestbook'))?.data?.['value'];

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await run('git', args, { cwd, env: world.env });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-replace-'));
  gh = await startGithost();
  for (const [name, email] of [
    ['alice', world.keys.alice.email],
    ['mallory', 'mallory@example.com'],
  ]) {
    const r = await api(gh.url, 'POST', '/api/v1/admin/users', {
      token: gh.adminToken,
      body: { username: name, email, password: `${name}-pass-1`, must_change_password: false },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  assert.equal((await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'guestbook' } })).status, 201);
  assert.equal(
    (await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'], body: { armored_public_key: world.keys.alice.armored } })).status,
    201,
  );
  // mallory may push (a collaborator with write access) but has no signing key anywhere
  assert.equal(
    (await api(gh.url, 'PUT', '/api/v1/repos/alice/guestbook/collaborators/mallory', { basic: ['alice', 'alice-pass-1'], body: { permission: 'write' } }))
      .status,
    204,
  );
  const repoURL = `${gh.url}/alice/guestbook.git`;
  aliceURL = repoURL.replace('://', '://alice:alice-pass-1@');
  malloryURL = repoURL.replace('://', '://mallory:mallory-pass-1@');

  store = tempEmbeddedStore();
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, pollIntervalMs: 3_600_000 });
  gh.server.onPush((e) => svc.controller.notifyPush(`${gh.url}/${e.owner}/${e.repo}.git`));
  await svc.controller.keys.add(world.keys.alice.armored);
  const v = `${GROUPS.gitops}/v1alpha1`;
  await store.apply({
    apiVersion: v,
    kind: 'AppProject',
    metadata: { name: 'signed', namespace: 'argocd' },
    spec: {
      sourceRepos: [`${gh.url}/alice/*`],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'guestbook' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      signatureKeys: [{ keyID: world.keys.alice.keyID }],
    },
  });

  // signed commit A, synced
  alice = createRepo(world, 'alice');
  alice.git('config', 'user.email', world.keys.alice.email);
  signedA = alice.commit({ 'guestbook/release.yaml': cm('release', 'a'), 'guestbook/policy.yaml': cm('policy', 'locked-down') }, 'release a', world.keys.alice);
  await git(alice.dir, 'push', '-q', aliceURL, 'main');
  await store.apply({
    apiVersion: v,
    kind: 'Application',
    metadata: { name: 'guestbook', namespace: 'argocd' },
    spec: {
      project: 'signed',
      source: { repoURL, path: 'guestbook', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
  await waitFor(async () => (await app()).status?.sync?.revision === signedA && (await live('policy')) === 'locked-down', 15_000, 'A synced');

  malloryDir = join(dir, 'mallory');
  await git(dir, 'clone', '-q', malloryURL, malloryDir);
  await git(malloryDir, 'config', 'user.name', 'Mallory');
  await git(malloryDir, 'config', 'user.email', 'mallory@example.com');
});

after(async () => {
  await svc?.close();
  await store?.close();
  await gh?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a pushed refs/replace/<blob> does not change what the controller applies from the next signed commit', async () => {
  // mallory replaces the blob of policy.yaml, which alice's next commit keeps unchanged
  const policyBlob = await git(malloryDir, 'rev-parse', 'HEAD:guestbook/policy.yaml');
  const evil = (await run('git', ['hash-object', '-w', '--stdin'], { cwd: malloryDir, env: world.env, input: cm('policy', 'wide-open') })).stdout.trim();
  await git(malloryDir, 'replace', policyBlob, evil);
  await git(malloryDir, 'push', '-q', 'origin', `refs/replace/${policyBlob}`);

  // alice signs and pushes B; only release.yaml changes
  const signedB = alice.commit({ 'guestbook/release.yaml': cm('release', 'b') }, 'release b', world.keys.alice);
  await git(alice.dir, 'push', '-q', aliceURL, 'main');
  const a = await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.revision === signedB && x.status.sync.status === 'Synced' ? x : undefined;
    },
    15_000,
    'B synced',
  );
  assert.equal(a.status?.operationState?.syncResult?.signer?.includes('alice@example.com'), true);
  assert.equal(await live('release'), 'b');
  assert.equal(await live('policy'), 'locked-down', 'the applied policy.yaml is the blob alice signed, not the one refs/replace/* substitutes');
});

test("the commit API does not show an unsigned commit as verified through a replace ref to another user's signed commit", async () => {
  await git(malloryDir, 'fetch', '-q', 'origin');
  const unsigned = (
    await run('git', ['commit-tree', '-p', signedA, '-m', 'mallory: unsigned', `${signedA}^{tree}`], { cwd: malloryDir, env: world.env })
  ).stdout.trim();
  await git(malloryDir, 'push', '-q', 'origin', `${unsigned}:refs/heads/mallory`);
  await git(malloryDir, 'replace', unsigned, signedA);
  await git(malloryDir, 'push', '-q', 'origin', `refs/replace/${unsigned}`);

  const c = await api(gh.url, 'GET', `/api/v1/repos/alice/guestbook/git/commits/${unsigned}`, { basic: ['alice', 'alice-pass-1'] });
  assert.equal(c.status, 200, JSON.stringify(c.body));
  assert.equal(c.body.sha, unsigned);
  assert.equal(c.body.commit.verification.verified, false, JSON.stringify(c.body.commit.verification));
  assert.equal(c.body.commit.verification.reason, 'gpg.error.not_signed_commit');
  assert.equal(c.body.commit.message.trim(), 'mallory: unsigned', 'the API shows the commit asked for');
  // alice's own commit is still verified
  const good = await api(gh.url, 'GET', `/api/v1/repos/alice/guestbook/git/commits/${signedA}`, { basic: ['alice', 'alice-pass-1'] });
  assert.equal(good.body.commit.verification.verified, true, JSON.stringify(good.body.commit.verification));
});
