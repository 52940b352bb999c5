// Attack: a team whose AppProject allows only its own repositories
// (sourceRepos: http://host/alice/*) points an Application at
// http://host/alice/../bob/infra.git. The pattern matched the raw string, and git
// (libcurl) resolves the dot segments and fetches bob's repository. Repository URLs
// are normalized on both sides before matching, "*" stays inside one path segment as
// in Argo CD, and a repoURL with dot segments (or encoded slashes) is refused.
// End to end: repositories on githost, Applications applied to the store, the real
// controller fetching with git.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sourceRepoAllowed, startGitOpsService, type AppProject, type Application, type GitOpsService } from '../../src/gitops/control/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { api, startGithost, type Started } from '../helpers/githost.js';
import { run } from '../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld } from '../helpers/signed-repo.js';
import { waitFor } from '../helpers/wait.js';

let world: GpgWorld;
let gh: Started;
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
const V = `${GROUPS.gitops}/v1alpha1`;

const cm = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  from: "${name}"\n`;
const liveCM = async (name: string): Promise<KubeObject | undefined> => store.get<KubeObject>(Kinds.ConfigMap, name, 'team');
const status = async (name: string) => (await store.get<Application>(Kinds.Application, name, 'argocd'))?.status;
/** The status once the controller has judged the Application: refused (a condition) or synced. */
const judged = (name: string) =>
  waitFor(() => status(name).then((x) => (x?.conditions?.length || x?.sync?.status === 'Synced' ? x : undefined)), 10_000, `${name} judged`);

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-srcrepos-'));
  gh = await startGithost();
  for (const [user, repo, file] of [
    ['alice', 'app', 'alice-app'],
    ['bob', 'infra', 'bob-infra'],
  ] as const) {
    assert.equal(
      (
        await api(gh.url, 'POST', '/api/v1/admin/users', {
          token: gh.adminToken,
          body: { username: user, email: `${user}@example.com`, password: `${user}-pass-12`, must_change_password: false },
        })
      ).status,
      201,
    );
    assert.equal((await api(gh.url, 'POST', '/api/v1/user/repos', { basic: [user, `${user}-pass-12`], body: { name: repo } })).status, 201);
    const r = createRepo(world, `${user}-${repo}`);
    r.commit({ 'deploy/cm.yaml': cm(file) }, file);
    const push = await run('git', ['push', '-q', `${gh.url}/${user}/${repo}.git`.replace('://', `://${user}:${user}-pass-12@`), 'main'], {
      cwd: r.dir,
      env: world.env,
    });
    assert.equal(push.status, 0, push.stderr);
  }
  store = tempEmbeddedStore();
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, pollIntervalMs: 3_600_000 });
  await store.apply({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name: 'team-alice', namespace: 'argocd' },
    spec: {
      sourceRepos: [`${gh.url}/alice/*`],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: 'team' }],
      clusterResourceWhitelist: [{ group: '', kind: 'Namespace' }],
    },
  });
});

after(async () => {
  await svc?.close();
  await store?.close();
  await gh?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const application = (name: string, repoURL: string) =>
  store.apply({
    apiVersion: V,
    kind: 'Application',
    metadata: { name, namespace: 'argocd' },
    spec: {
      project: 'team-alice',
      source: { repoURL, path: 'deploy', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'team' },
      syncPolicy: { automated: { prune: false }, syncOptions: ['CreateNamespace=true'] },
    },
  });

test("an Application cannot reach another owner's repository through dot segments in its repoURL", async () => {
  const host = gh.url;
  const attempts = [
    `${host}/alice/../bob/infra.git`,
    `${host}/alice/%2e%2e/bob/infra.git`,
    `${host}/alice/%2E%2e/bob/infra`,
    `${host}/alice/app/../../bob/infra.git`,
    `${host}/alice/./../bob/infra.git`,
    `${host}/alice/..%2fbob%2finfra.git`,
  ];
  for (const [i, repoURL] of attempts.entries()) await application(`sneak-${i}`, repoURL);
  await application('other-owner', `${host}/bob/infra.git`);
  await application('nested', `${host}/alice/app/sub`);
  // the legitimate one (without .git: the same repository)
  await application('own', `${host}/alice/app`);
  await waitFor(async () => (await liveCM('alice-app')) !== undefined, 15_000, 'own repository applied');
  for (const [i, repoURL] of attempts.entries()) {
    const s = await judged(`sneak-${i}`);
    assert.ok(
      s.conditions?.some((c) => c.type === 'InvalidSpecError' && /refused|not permitted/.test(c.message ?? '')),
      `${repoURL}: ${JSON.stringify(s.conditions)}`,
    );
  }
  for (const name of ['other-owner', 'nested']) {
    const s = await judged(name);
    assert.ok(
      s.conditions?.some((c) => c.type === 'InvalidSpecError' && /is not permitted in project 'team-alice'/.test(c.message ?? '')),
      `${name}: ${JSON.stringify(s.conditions)}`,
    );
  }
  assert.equal(await liveCM('bob-infra'), undefined, "bob's manifests were applied");
});

test('sourceRepos matching follows Argo CD: normalized URLs, "*" within a segment, "**" across, "!" refuses', () => {
  const project = (sourceRepos: string[]): AppProject => ({
    apiVersion: V,
    kind: 'AppProject',
    metadata: { name: 'p', namespace: 'argocd' },
    spec: { sourceRepos },
  });
  const cases: { name: string; patterns: string[]; url: string; allowed: boolean }[] = [
    { name: 'star within the owner', patterns: ['https://git.example/alice/*'], url: 'https://git.example/alice/app.git', allowed: true },
    { name: 'star does not cross /', patterns: ['https://git.example/alice/*'], url: 'https://git.example/alice/group/app', allowed: false },
    { name: 'double star crosses /', patterns: ['https://git.example/alice/**'], url: 'https://git.example/alice/group/app', allowed: true },
    { name: 'dot segments refused', patterns: ['https://git.example/alice/*'], url: 'https://git.example/alice/../bob/app', allowed: false },
    { name: 'dot segments refused even for *', patterns: ['*'], url: 'https://git.example/alice/../bob/app', allowed: false },
    { name: 'encoded dot segments refused', patterns: ['**'], url: 'https://git.example/alice/%2E%2E/bob/app', allowed: false },
    { name: 'encoded slash refused', patterns: ['https://git.example/alice/*'], url: 'https://git.example/alice/x%2F..%2Fbob', allowed: false },
    { name: 'scheme and host case', patterns: ['https://git.example/alice/*'], url: 'HTTPS://Git.Example/alice/app', allowed: true },
    { name: 'default port', patterns: ['https://git.example/alice/*'], url: 'https://git.example:443/alice/app', allowed: true },
    { name: 'other port is another server', patterns: ['https://git.example/alice/*'], url: 'https://git.example:8443/alice/app', allowed: false },
    { name: 'percent-encoded letters', patterns: ['https://git.example/alice/*'], url: 'https://git.example/%61lice/app', allowed: true },
    { name: 'trailing .git and slash', patterns: ['https://git.example/alice/app.git'], url: 'https://git.example/alice/app/', allowed: true },
    { name: 'scp-like ssh', patterns: ['ssh://git@git.example/alice/*'], url: 'git@git.example:alice/app.git', allowed: true },
    { name: 'deny wins', patterns: ['*', '!https://git.example/bob/*'], url: 'https://git.example/bob/infra', allowed: false },
    { name: 'deny leaves others', patterns: ['*', '!https://git.example/bob/*'], url: 'https://git.example/alice/app', allowed: true },
    { name: 'local path', patterns: ['/srv/git/*'], url: '/srv/git/app.git', allowed: true },
    { name: 'local path with ..', patterns: ['/srv/git/*'], url: '/srv/git/../secret/app', allowed: false },
    { name: 'port wildcard', patterns: ['git://127.0.0.1:*/*'], url: 'git://127.0.0.1:9419/web.git', allowed: true },
  ];
  for (const c of cases) assert.equal(sourceRepoAllowed(project(c.patterns), c.url), c.allowed, c.name);
});
