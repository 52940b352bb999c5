// Attack: an Application pins a full commit SHA (targetRevision: <40 hex>). A collaborator
// with push access but no signing key pushes a *branch* (or tag) named like that SHA,
// pointing at an older commit alice signed. A resolver that tries refs/heads/<rev> and
// refs/tags/<rev> before taking a full SHA as a commit ID would sync the older commit (a
// rollback that passes signature enforcement; without enforcement the pin was the only guard).
//   - githost refuses such names at push (the real git push over HTTP);
//   - the controller, reading a repository on a server that allows them (a plain git
//     repository, as Argo CD reads any server), still syncs exactly the pinned commit.
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
let malloryDir: string;
let signedOld = '';
let signedNew = '';
const V = `${GROUPS.gitops}/v1alpha1`;

const cm = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const app = async (name: string): Promise<Application> => (await store.get<Application>(Kinds.Application, name, 'argocd'))!;
const live = async (ns: string): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'policy', ns))?.data?.['value'];

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await run('git', args, { cwd, env: world.env });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

async function pinnedApp(name: string, repoURL: string, ns: string): Promise<void> {
  await store.apply({
    apiVersion: V,
    kind: 'Application',
    metadata: { name, namespace: 'argocd' },
    spec: {
      project: 'signed',
      source: { repoURL, path: 'guestbook', targetRevision: signedNew },
      destination: { server: 'https://kubernetes.default.svc', namespace: ns },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
}

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-pinned-'));
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
    (await api(gh.url, 'PUT', '/api/v1/repos/alice/guestbook/collaborators/mallory', { basic: ['alice', 'alice-pass-1'], body: { permission: 'write' } }))
      .status,
    204,
  );
  const repoURL = `${gh.url}/alice/guestbook.git`;
  aliceURL = repoURL.replace('://', '://alice:alice-pass-1@');

  store = tempEmbeddedStore();
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: join(dir, 'state'), port: 0, tls: false, pollIntervalMs: 3_600_000 });
  gh.server.onPush((e) => svc.controller.notifyPush(`${gh.url}/${e.owner}/${e.repo}.git`));
  await svc.controller.keys.add(world.keys.alice.armored);
  await store.apply({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name: 'signed', namespace: 'argocd' },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
      signatureKeys: [{ keyID: world.keys.alice.keyID }],
    },
  });

  // two commits alice signed: the old one had the wide-open policy, the pinned one fixes it
  alice = createRepo(world, 'alice');
  alice.git('config', 'user.email', world.keys.alice.email);
  signedOld = alice.commit({ 'guestbook/policy.yaml': cm('policy', 'wide-open') }, 'policy: wide open', world.keys.alice);
  signedNew = alice.commit({ 'guestbook/policy.yaml': cm('policy', 'locked-down') }, 'policy: locked down', world.keys.alice);
  await git(alice.dir, 'push', '-q', aliceURL, 'main');

  malloryDir = join(dir, 'mallory');
  await git(dir, 'clone', '-q', repoURL.replace('://', '://mallory:mallory-pass-1@'), malloryDir);
});

after(async () => {
  await svc?.close();
  await store?.close();
  await gh?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('githost refuses a pushed branch or tag named like a full commit SHA; the pinned Application stays on its commit', async () => {
  await pinnedApp('hosted', `${gh.url}/alice/guestbook.git`, 'hosted');
  await waitFor(
    async () => (await app('hosted')).status?.sync?.revision === signedNew && (await live('hosted')) === 'locked-down',
    15_000,
    'pinned commit synced',
  );

  for (const ref of [`refs/heads/${signedNew}`, `refs/tags/${signedNew}`, `refs/heads/${signedNew.toUpperCase()}`]) {
    const r = await run('git', ['push', 'origin', `${signedOld}:${ref}`], { cwd: malloryDir, env: world.env });
    assert.notEqual(r.status, 0, `the push of ${ref} must be refused`);
    assert.match(r.stderr, /push refused: (branch|tag) name "[0-9a-fA-F]{40}" looks like a full commit SHA/, r.stderr);
  }
  const heads = await git(malloryDir, 'ls-remote', 'origin');
  assert.doesNotMatch(heads, new RegExp(`refs/(heads|tags)/${signedNew}`, 'i'), 'no SHA-named ref was stored');
  // an ordinary branch still goes through the same check
  await git(malloryDir, 'push', '-q', 'origin', `${signedOld}:refs/heads/mallory-topic`);

  // the API's default_branch is another way in
  const r = await api(gh.url, 'POST', '/api/v1/user/repos', {
    basic: ['mallory', 'mallory-pass-1'],
    body: { name: 'shaped', default_branch: signedNew, auto_init: true },
  });
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.match(String(r.body.message), /branch name is invalid \[name: "[0-9a-f]{40}"\]: looks like a full commit SHA/);

  svc.controller.notifyPush(`${gh.url}/alice/guestbook.git`);
  await new Promise((res) => setTimeout(res, 500));
  assert.equal((await app('hosted')).status?.sync?.revision, signedNew);
  assert.equal(await live('hosted'), 'locked-down');
});

test('a branch and a tag named like the pinned SHA on another git server do not move the pinned Application', async () => {
  // a server that allows such names (a plain git repository): the controller must still take the SHA as the commit
  await git(alice.dir, 'branch', signedNew, signedOld);
  await git(alice.dir, 'tag', signedNew, signedOld);
  await pinnedApp('direct', alice.dir, 'direct');
  const a = await waitFor(
    async () => {
      const x = await app('direct');
      return x.status?.sync?.status === 'Synced' ? x : undefined;
    },
    15_000,
    'direct synced',
  );
  assert.equal(a.status?.sync?.revision, signedNew, 'the pinned commit, not the branch named like it');
  assert.equal(await live('direct'), 'locked-down');
});
