// Attack: alice signed annotated tags v0.9 (an old release) and v1.0; an Application
// follows targetRevision v1.0 under signature enforcement. A collaborator with push access
// but no signing key force-pushes the v0.9 tag object as refs/tags/v1.0: the signature is
// alice's and valid, but it was made for the name v0.9. The controller must refuse a tag
// found under another name than its own ("tag" header), and githost's tag protection
// (Gitea's /repos/{owner}/{repo}/tag_protections) must refuse the push itself.
// Through the real entry points: git push over HTTP to githost, the controller syncing on
// githost's push notification.
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
let oldCommit = '';
let newCommit = '';
const V = `${GROUPS.gitops}/v1alpha1`;

const cm = (value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: policy\ndata:\n  value: "${value}"\n`;
const app = async (): Promise<Application> => (await store.get<Application>(Kinds.Application, 'tagged', 'argocd'))!;
const live = async (): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'policy', 'tagged'))?.data?.['value'];

async function git(cwd: string, ...args: string[]): Promise<string> {
  const r = await run('git', args, { cwd, env: world.env });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-tagname-'));
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
      sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }], gpg: { mode: 'strict', keys: [world.keys.alice.keyID] } }] } },
    },
  });

  alice = createRepo(world, 'alice');
  alice.git('config', 'user.email', world.keys.alice.email);
  oldCommit = alice.commit({ 'app/policy.yaml': cm('wide-open') }, 'v0.9: wide open', world.keys.alice);
  alice.tag('v0.9', oldCommit, { annotated: true, signer: world.keys.alice });
  newCommit = alice.commit({ 'app/policy.yaml': cm('locked-down') }, 'v1.0: locked down', world.keys.alice);
  alice.tag('v1.0', newCommit, { annotated: true, signer: world.keys.alice });
  await git(alice.dir, 'push', '-q', aliceURL, 'main', 'v0.9', 'v1.0');

  await store.apply({
    apiVersion: V,
    kind: 'Application',
    metadata: { name: 'tagged', namespace: 'argocd' },
    spec: {
      project: 'signed',
      source: { repoURL, path: 'app', targetRevision: 'v1.0' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'tagged' },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
  await waitFor(async () => (await app()).status?.sync?.revision === newCommit && (await live()) === 'locked-down', 15_000, 'v1.0 synced');

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

test("alice's signed v0.9 tag object force-pushed as refs/tags/v1.0 is refused by the controller (the tag's own name is v0.9)", async () => {
  const v09 = await git(malloryDir, 'rev-parse', 'refs/tags/v0.9');
  await git(malloryDir, 'push', '-q', '-f', 'origin', `${v09}:refs/tags/v1.0`);
  const a = await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.status === 'Sync Error' ? x : undefined;
    },
    15_000,
    'refused',
  );
  assert.match(a.status?.operationState?.message ?? '', /^Annotated tag [0-9a-f]{40} was signed as tag "v0\.9" but is found as refs\/tags\/v1\.0/);
  assert.equal(a.status?.conditions?.find((k) => k.type === 'ComparisonError')?.reason, 'SignatureTagNameMismatch');
  assert.equal(await live(), 'locked-down', 'v0.9 was not applied');
  // put v1.0 back for the next test
  await git(alice.dir, 'push', '-q', '-f', aliceURL, 'refs/tags/v1.0');
  await waitFor(async () => (await app()).status?.sync?.status === 'Synced' || undefined, 15_000, 'v1.0 again');
});

test('githost tag protection (Gitea API) refuses creating, moving and deleting a protected tag by anyone it does not list', async () => {
  const created = await api(gh.url, 'POST', '/api/v1/repos/alice/guestbook/tag_protections', {
    basic: ['alice', 'alice-pass-1'],
    body: { name_pattern: 'v*', whitelist_usernames: ['alice'] },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.name_pattern, 'v*');
  assert.deepEqual(created.body.whitelist_usernames, ['alice']);
  const listed = await api(gh.url, 'GET', '/api/v1/repos/alice/guestbook/tag_protections', { basic: ['alice', 'alice-pass-1'] });
  assert.deepEqual(
    listed.body.map((t: { id: number }) => t.id),
    [created.body.id],
  );
  // mallory may push, but is no repository admin: the rules are not hers to change
  const hers = await api(gh.url, 'DELETE', `/api/v1/repos/alice/guestbook/tag_protections/${created.body.id}`, { basic: ['mallory', 'mallory-pass-1'] });
  assert.equal(hers.status, 403);
  const bad = await api(gh.url, 'POST', '/api/v1/repos/alice/guestbook/tag_protections', { basic: ['alice', 'alice-pass-1'], body: { name_pattern: 'v{1,2' } });
  assert.equal(bad.status, 422, JSON.stringify(bad.body));

  const v09 = await git(malloryDir, 'rev-parse', 'refs/tags/v0.9');
  for (const [what, args] of [
    ['move', ['-f', 'origin', `${v09}:refs/tags/v1.0`]],
    ['create', ['origin', `${v09}:refs/tags/v2.0`]],
    ['delete', ['origin', ':refs/tags/v0.9']],
  ] as const) {
    const r = await run('git', ['push', ...args], { cwd: malloryDir, env: world.env });
    assert.notEqual(r.status, 0, `${what} must be refused`);
    assert.match(r.stderr, /Tag v\d\.\d is protected/, `${what}: ${r.stderr}`);
  }
  const remote = await git(malloryDir, 'ls-remote', '--tags', 'origin');
  assert.match(remote, /refs\/tags\/v0\.9\n/);
  assert.doesNotMatch(remote, /refs\/tags\/v2\.0/);
  // an unprotected tag name, and alice herself, still push
  await git(malloryDir, 'push', '-q', 'origin', `${v09}:refs/tags/mallory-note`);
  alice.tag('v1.1', newCommit, { annotated: true, signer: world.keys.alice });
  await git(alice.dir, 'push', '-q', aliceURL, 'v1.1');
  assert.equal((await app()).status?.sync?.revision, newCommit);
});
