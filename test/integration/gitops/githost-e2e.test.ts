// Signed GitOps end to end (docs/gitops.md, docs/githost.md): a user and token made through the
// code-hosting API, commits made with real `git commit -S` and pushed over HTTP to
// the code-hosting server, whose push notification makes the controller sync at once:
// the unsigned revision is refused (nothing applied), the signed one is applied.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startGitOpsService, type Application, type GitOpsService } from '../../../src/gitops/control/index.js';
import { GROUPS, Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { listEvents } from '../../helpers/events.js';
import { api, startGithost, type Started } from '../../helpers/githost.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';
import { run } from '../../helpers/run.js';
import { createGpgWorld, createRepo, type GpgWorld, type TestRepo } from '../../helpers/signed-repo.js';
import { waitFor } from '../../helpers/wait.js';
import { BIN } from '../../helpers/world.js';
import { readFileSync } from 'node:fs';

let world: GpgWorld;
let gh: Started;
let svc: GitOpsService;
let store: ResourceStore;
let dir: string;
let work: TestRepo;
let cloneURL: string;
let pushURL: string;
let signedSha = '';
let ghClosed = false;
const pushes: string[] = [];

const app = async (): Promise<Application> => (await store.get<Application>(Kinds.Application, 'guestbook', 'argocd'))!;
const live = async (): Promise<string | undefined> =>
  (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.ConfigMap, 'guestbook-ui', 'guestbook'))?.data?.['release'];
const manifest = (release: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-ui\ndata:\n  release: "${release}"\n`;

before(async () => {
  world = createGpgWorld();
  dir = mkdtempSync(join(tmpdir(), 'strait-e2e-'));
  gh = await startGithost();
  // the setup flow: token by basic auth, user created with the admin token, user id read back
  const tok = await api(gh.url, 'POST', '/api/v1/users/gitea_admin/tokens', { basic: ['gitea_admin', 'admin-pass-1'], body: { name: 'e2e', scopes: ['all'] } });
  assert.equal(tok.status, 201, JSON.stringify(tok.body));
  const admin = tok.body.sha1 as string;
  const created = await api(gh.url, 'POST', '/api/v1/admin/users', {
    token: admin,
    body: {
      email: world.keys.alice.email,
      login_name: 'alice',
      must_change_password: false,
      password: 'alice-pass-1',
      send_notify: false,
      username: 'alice',
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const user = await api(gh.url, 'GET', '/api/v1/users/alice', { token: admin });
  assert.equal(typeof user.body.id, 'number');
  const repo = await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'guestbook', private: false } });
  assert.equal(repo.status, 201, JSON.stringify(repo.body));
  // the key is added to the code-hosting server (its e-mail matches the user's) and to the controller
  const key = await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'], body: { armored_public_key: world.keys.alice.armored } });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  cloneURL = `${gh.url}/alice/guestbook.git`;
  pushURL = cloneURL.replace('://', '://alice:alice-pass-1@');

  store = tempEmbeddedStore();
  svc = await startGitOpsService({
    store,
    namespace: 'argocd',
    stateDir: dir,
    port: 0,
    tls: false,
    pollIntervalMs: 3_600_000,
    initialPasswordFile: join(dir, 'admin-password'),
  });
  gh.server.onPush((e) => {
    pushes.push(e.newSha);
    svc.controller.notifyPush(`${gh.url}/${e.owner}/${e.repo}.git`);
  });
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
  work = createRepo(world, 'work');
  work.git('config', 'user.email', world.keys.alice.email);
  work.git('config', 'user.name', 'Alice Tester');
});

after(async () => {
  await svc?.close();
  await store?.close();
  if (!ghClosed) await gh?.close();
  world?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('an unsigned push is refused with "Revision is not signed" and nothing is applied', async () => {
  const sha = work.commit({ 'guestbook/cm.yaml': manifest('unsigned') }, 'unsigned release');
  const push = await run('git', ['push', '-q', pushURL, 'main'], { cwd: work.dir, env: world.env });
  assert.equal(push.status, 0, push.stderr);
  await store.apply({
    apiVersion: `${GROUPS.gitops}/v1alpha1`,
    kind: 'Application',
    metadata: { name: 'guestbook', namespace: 'argocd' },
    spec: {
      project: 'signed',
      source: { repoURL: cloneURL, path: 'guestbook', targetRevision: 'main' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' },
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ['CreateNamespace=true'] },
    },
  });
  const a = await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.status === 'Sync Error' ? x : undefined;
    },
    15_000,
    'Sync Error',
  );
  assert.equal(a.status?.operationState?.message, 'Revision is not signed');
  assert.ok(a.status?.conditions?.some((c) => c.type === 'ComparisonError' && c.message === 'Revision is not signed'));
  assert.ok((await listEvents(store)).some((e) => e.name === 'guestbook' && e.reason === 'ResourceComparison'));
  assert.equal(await live(), undefined);
  assert.ok(pushes.includes(sha), 'the code-hosting server reported the push');
});

test('a signed push syncs at once through the push notification', async () => {
  const sha = work.commit({ 'guestbook/cm.yaml': manifest('signed') }, 'signed release', world.keys.alice);
  const push = await run('git', ['push', '-q', pushURL, 'main'], { cwd: work.dir, env: world.env });
  assert.equal(push.status, 0, push.stderr);
  const a = await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.status === 'Synced' ? x : undefined;
    },
    10_000,
    'Synced after push',
  );
  assert.equal(a.status?.sync?.revision, sha);
  signedSha = sha;
  assert.match(a.status?.operationState?.syncResult?.signer ?? '', new RegExp(`Alice Tester <alice@example.com> \\(${world.keys.alice.signingSubkeyID}\\)`));
  assert.equal(await live(), 'signed');
  // and the code-hosting server agrees the commit is verified
  const c = await api(gh.url, 'GET', `/api/v1/repos/alice/guestbook/git/commits/${sha}`, { basic: ['alice', 'alice-pass-1'] });
  assert.equal(c.body.commit.verification.verified, true, JSON.stringify(c.body.commit.verification));
});

/** the strait CLI (its own session file), asynchronously: the control module answers from this process */
async function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return run(process.execPath, [BIN, ...args], { env: { ...process.env, STRAIT_CONFIG_DIR: join(dir, 'cli-config') } });
}

test('an unsigned push after a signed one: the API, `app get` and `app list` name the refused revision, the last good one labelled', async () => {
  assert.ok(signedSha, 'the signed push synced first');
  const sha = work.commit({ 'guestbook/cm.yaml': manifest('unsigned-2') }, 'unsigned after signed');
  const push = await run('git', ['push', '-q', pushURL, 'main'], { cwd: work.dir, env: world.env });
  assert.equal(push.status, 0, push.stderr);
  const a = await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.status === 'Sync Error' && x.status.sync.revision === sha ? x : undefined;
    },
    15_000,
    'Sync Error at the new revision',
  );
  assert.equal(a.status?.operationState?.operation?.sync.revision, sha);
  assert.equal(a.status?.operationState?.syncResult?.revision, signedSha, 'the last good revision is kept as the last sync result');
  assert.equal(await live(), 'signed', 'nothing of the refused revision applied');

  const login = await cli([
    'login',
    `127.0.0.1:${svc.api.port}`,
    '--plaintext',
    '--username',
    'admin',
    '--password',
    readFileSync(join(dir, 'admin-password'), 'utf8').trim(),
  ]);
  assert.equal(login.status, 0, login.stderr);
  // the API as every client reads it
  const rest = await cli(['app', 'get', 'guestbook', '-o', 'json']);
  assert.equal(rest.status, 0, rest.stderr);
  const got = JSON.parse(rest.stdout) as Application;
  assert.equal(got.status?.sync?.revision, sha);
  assert.equal(got.status?.operationState?.syncResult?.revision, signedSha);
  const text = await cli(['app', 'get', 'guestbook']);
  assert.match(text.stdout, new RegExp(`Sync Status:\\s+Sync Error to ${sha} \\(refused: unsigned\\); last good: ${signedSha}\\n`));
  const list = await cli(['app', 'list']);
  const row = list.stdout.split('\n').find((l) => l.startsWith('guestbook'));
  assert.match(row ?? '', new RegExp(`Sync Error\\s+${sha.slice(0, 12)}\\s+${signedSha.slice(0, 12)}\\s+unsigned`), list.stdout);
});

test('a repository that stops answering: the Application is no longer Synced at the old revision', async () => {
  const sha = work.commit({ 'guestbook/cm.yaml': manifest('signed-3') }, 'signed again', world.keys.alice);
  const push = await run('git', ['push', '-q', pushURL, 'main'], { cwd: work.dir, env: world.env });
  assert.equal(push.status, 0, push.stderr);
  await waitFor(
    async () => {
      const x = await app();
      return x.status?.sync?.status === 'Synced' && x.status.sync.revision === sha ? x : undefined;
    },
    10_000,
    'Synced',
  );
  await gh.close();
  ghClosed = true;
  // the next poll (a refresh: it fetches once the last fetch is a second old) finds the repository gone
  const a = await waitFor(
    async () => {
      await svc.controller.refresh('guestbook');
      const x = await app();
      return x.status?.sync?.status === 'Unknown' ? x : undefined;
    },
    15_000,
    'Unknown',
  );
  assert.equal(a.status?.sync?.revision, undefined, 'no revision claimed while the repository does not answer');
  assert.ok(
    a.status?.conditions?.some((c) => c.type === 'ComparisonError' && c.reason === 'FetchFailed'),
    JSON.stringify(a.status?.conditions),
  );
  const text = await cli(['app', 'get', 'guestbook']);
  assert.match(text.stdout, new RegExp(`Sync Status:\\s+Unknown \\(FetchFailed\\); last good: ${sha}\\n`));
});
