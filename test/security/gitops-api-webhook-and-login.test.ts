// Attacks on the control module's HTTP API, over real HTTP:
//  - anyone who reaches POST /api/webhook makes the controller fetch and reconcile at
//    will: with a webhook secret in argocd-secret (webhook.gitea.secret /
//    webhook.github.secret, as Argo CD) only signed webhooks are accepted;
//  - password guessing on POST /api/v1/session: failed logins are limited per user
//    name and per client address (Argo CD's 5 failures in 300 s), and a limited login
//    is refused even with the right password; guessing over gRPC (what argocd speaks)
//    counts against the same limit.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_SECRET, ensureAdminSecret, loginLimitsFromEnv, startGitOpsService, type GitOpsService } from '../../src/gitops/control/index.js';
import { isStraitError } from '../../src/base/errors/index.js';
import { Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';
import { api, gitWorkTree, ok, startGithost, tempDir, toolEnv } from '../helpers/githost.js';
import { run } from '../helpers/run.js';
import { waitFor } from '../helpers/wait.js';

let store: ResourceStore;
let svc: GitOpsService;
let dir: string;
let password: string;
const refreshes: string[] = [];

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const hmac = (secret: string, body: string): string => createHmac('sha256', secret).update(body).digest('hex');

async function setWebhookSecrets(data: Record<string, string | null>): Promise<void> {
  const s = (await store.get<KubeObject & { data?: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd'))!;
  const next = { ...(s.data ?? {}) };
  for (const [k, v] of Object.entries(data)) {
    if (v === null) delete next[k];
    else next[k] = b64(v);
  }
  await store.update({ ...s, data: next });
}

const hook = (headers: Record<string, string>, body: string) =>
  fetch(`${svc.api.url}/api/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

const login = (username: string, pw: string) =>
  fetch(`${svc.api.url}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: pw }) });

before(async () => {
  store = tempEmbeddedStore();
  dir = mkdtempSync(join(tmpdir(), 'strait-api-'));
  password = (await ensureAdminSecret(store, 'argocd')).password;
  svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, pollIntervalMs: 3_600_000 });
  const notify = svc.controller.notifyPush.bind(svc.controller);
  svc.controller.notifyPush = (url: string) => {
    refreshes.push(url);
    notify(url);
  };
});

after(async () => {
  await svc?.close();
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('with webhook secrets configured, unsigned or wrongly signed webhooks are refused and trigger nothing', async () => {
  await setWebhookSecrets({ 'webhook.gitea.secret': 'gitea-shared', 'webhook.github.secret': 'github-shared' });
  const body = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: 'http://127.0.0.1:1/attacker/forced.git' } });
  const refused: [string, Record<string, string>][] = [
    ['no signature', { 'X-Gitea-Event': 'push' }],
    ['gitea signature with the wrong secret', { 'X-Gitea-Event': 'push', 'X-Gitea-Signature': hmac('guess', body) }],
    ['gitea signature of another body', { 'X-Gitea-Event': 'push', 'X-Gitea-Signature': hmac('gitea-shared', `${body} `) }],
    ['github signature with the gitea secret', { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': `sha256=${hmac('gitea-shared', body)}` }],
    ['github signature without the sha256= prefix', { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': hmac('github-shared', body) }],
    ['truncated signature', { 'X-Gitea-Event': 'push', 'X-Gitea-Signature': hmac('gitea-shared', body).slice(0, 32) }],
  ];
  for (const [name, headers] of refused) {
    const r = await hook(headers, body);
    assert.equal(r.status, 400, name);
    assert.match(((await r.json()) as { message: string }).message, /^Webhook processing failed: /, name);
  }
  assert.deepEqual(refreshes, [], 'a refused webhook triggered a refresh');

  const giteaOK = await hook({ 'X-Gitea-Event': 'push', 'X-Gitea-Signature': hmac('gitea-shared', body) }, body);
  assert.equal(giteaOK.status, 200);
  const githubOK = await hook({ 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': `sha256=${hmac('github-shared', body).toUpperCase()}` }, body);
  assert.equal(githubOK.status, 200);
  assert.deepEqual(
    refreshes,
    ['http://127.0.0.1:1/attacker/forced.git', 'http://127.0.0.1:1/attacker/forced.git'],
    'each accepted webhook asks for one refresh',
  );

  // without any secret: accepted, as a refresh trigger only (Argo CD's behaviour, documented)
  await setWebhookSecrets({ 'webhook.gitea.secret': null, 'webhook.github.secret': null });
  assert.equal((await hook({ 'X-Gitea-Event': 'push' }, body)).status, 200);
});

test("githost's push webhooks, signed with pushWebhookSecret, are accepted; unsigned ones are not", async () => {
  await setWebhookSecrets({ 'webhook.gitea.secret': 'shared-with-githost' });
  refreshes.length = 0;
  const root = tempDir('hook-push');
  const env = toolEnv(root);
  const signed = await startGithost({ pushWebhooks: [`${svc.api.url}/api/webhook`], pushWebhookSecret: 'shared-with-githost' });
  const unsigned = await startGithost({ pushWebhooks: [`${svc.api.url}/api/webhook`] });
  try {
    const wt = gitWorkTree(root, env, { name: 'A', email: 'admin@example.com' });
    ok('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: wt.dir, env });
    for (const gh of [signed, unsigned]) {
      assert.equal((await api(gh.url, 'POST', '/api/v1/user/repos', { token: gh.adminToken, body: { name: 'app' } })).status, 201);
      const push = await run('git', ['push', '-q', `${gh.url}/gitea_admin/app.git`.replace('://', '://gitea_admin:admin-pass-1@'), 'main'], {
        cwd: wt.dir,
        env,
      });
      assert.equal(push.status, 0, push.stderr);
    }
    await waitFor(() => refreshes.includes(`${signed.url}/gitea_admin/app.git`), 5000, 'the signed push webhook accepted');
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(refreshes, [`${signed.url}/gitea_admin/app.git`], 'only the signed webhook triggered a refresh');
  } finally {
    await signed.close();
    await unsigned.close();
    rmSync(root, { recursive: true, force: true });
    await setWebhookSecrets({ 'webhook.gitea.secret': null });
  }
});

test('failed logins are limited per user: after 5 failures even the right password is refused', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await login('admin', `guess-${i}`)).status, 401);
  const limited = await login('admin', password);
  assert.equal(limited.status, 401, 'the right password was accepted after 5 failures');
  assert.equal(((await limited.json()) as { message: string }).message, 'Invalid username or password');
  const tooLong = await login('a'.repeat(33), 'x');
  assert.equal(tooLong.status, 400);
});

test("the limit follows Argo CD's environment variables; it lifts after the window, per client address too", async () => {
  assert.deepEqual(loginLimitsFromEnv({ ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT: '3', ARGOCD_SESSION_FAILURE_WINDOW_SECONDS: '1' }), {
    maxFailures: 3,
    windowSeconds: 1,
    maxEntries: 10_000,
  });
  assert.throws(
    () => loginLimitsFromEnv({ ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT: '0' }),
    (e: unknown) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID'),
  );
  assert.throws(
    () => loginLimitsFromEnv({ ARGOCD_SESSION_FAILURE_WINDOW_SECONDS: 'soon' }),
    (e: unknown) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID'),
  );

  await svc.close();
  const old = { ...process.env };
  process.env['ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT'] = '3';
  process.env['ARGOCD_SESSION_FAILURE_WINDOW_SECONDS'] = '1';
  try {
    svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, pollIntervalMs: 3_600_000 });
  } finally {
    process.env = old;
  }
  // three different user names from one address: the address is limited, admin included
  for (const u of ['root', 'guest', 'ops']) assert.equal((await login(u, 'x')).status, 401);
  assert.equal((await login('admin', password)).status, 401, 'the address was not limited');
  // after the window the right password works again, and a success clears the count
  await new Promise((r) => setTimeout(r, 1100));
  const ok = await waitFor(
    async () => {
      const r = await login('admin', password);
      return r.status === 200 ? r : undefined;
    },
    3000,
    'login after the window',
  );
  assert.ok(((await ok.json()) as { token?: string }).token);
});

test('password guessing over gRPC counts against the same limit as REST', async () => {
  const { createClient, ConnectError } = await import('@connectrpc/connect');
  const { createGrpcTransport } = await import('@connectrpc/connect-node');
  const { argocdService } = await import('../../src/gitops/wire/index.js');
  const own = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, pollIntervalMs: 3_600_000 });
  try {
    const session = createClient(argocdService('session.SessionService'), createGrpcTransport({ baseUrl: own.api.url })) as unknown as {
      create(req: { username: string; password: string }): Promise<{ token: string }>;
    };
    const code = (p: Promise<unknown>): Promise<number> =>
      p.then(
        () => 0,
        (e: unknown) => (e instanceof ConnectError ? e.code : -1),
      );
    for (let i = 0; i < 5; i++) assert.equal(await code(session.create({ username: 'admin', password: `guess-${i}` })), 16, 'Unauthenticated');
    assert.equal(await code(session.create({ username: 'admin', password })), 16, 'the right password over gRPC after 5 failures');
    const rest = await fetch(`${own.api.url}/api/v1/session`, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });
    assert.equal(rest.status, 401, 'REST is limited by the gRPC failures too');
    assert.equal(await code(session.create({ username: 'a'.repeat(33), password: 'x' })), 3, 'InvalidArgument for a too long user name');
  } finally {
    await own.close();
  }
});
