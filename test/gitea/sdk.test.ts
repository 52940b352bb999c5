// githost driven by the real Gitea Go SDK (code.gitea.io/sdk/gitea, pinned in
// test/gitea/sdk/go.mod): tokens in every form, users, repositories with listing and
// search, git push with a token, GPG keys with matching and mismatching e-mail, a
// signed commit's verification, migration with service gitea + auth_token. The same
// program runs against a real Gitea 1.26 first when it is built, so every expectation
// in it is Gitea's own behaviour. Skips only when Go is missing and nothing is cached.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Gpg, gitWorkTree, runAsync, startGithost, tempDir, toolEnv, type Started } from '../helpers/githost.js';
import { GITEA_ADMIN, ensureGiteaTools, startGitea, type Binaries } from './gitea.js';

let dir: string;
let gpg: Gpg;
let inputs: Record<string, string>;
let skip: string | undefined;
let bin: Binaries | undefined;

before(async () => {
  const tools = await ensureGiteaTools(process.env['STRAIT_GITEA_SERVER'] === 'off' ? 'sdk' : 'all');
  if ('skip' in tools) {
    skip = tools.skip;
    return;
  }
  bin = tools;
  dir = tempDir('gitea-sdk');
  gpg = new Gpg(join(dir, 'signer'));
  const match = gpg.newKey('Bob', 'bob@example.com');
  const other = gpg.newKey('Eve', 'eve@example.com');
  const wt = gitWorkTree(dir, gpg.env, { name: 'Bob', email: 'bob@example.com', keyID: match });
  wt.git('commit', '-q', '--allow-empty', '-S', '-m', 'signed by bob');
  inputs = {
    GPG_MATCH_KEY: gpg.armor(match),
    GPG_MATCH_KEYID: match,
    GPG_OTHER_KEY: gpg.armor(other),
    SIGNED_WORKTREE: wt.dir,
    SIGNED_SHA: wt.git('rev-parse', 'HEAD').trim(),
    ALLOW_MIGRATE_LOOPBACK: '1',
  };
});

after(() => {
  gpg?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function drive(url: string, admin: { user: string; password: string }): Promise<{ status: number | null; out: string }> {
  const env = {
    ...toolEnv(join(dir, `home-${Math.random().toString(36).slice(2)}`)),
    ...inputs,
    GITEA_URL: url,
    ADMIN_USER: admin.user,
    ADMIN_PASS: admin.password,
  };
  const r = await runAsync(bin?.sdk as string, [], { env, timeoutMs: 180_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const STEPS = [
  'version',
  'admin-create-user',
  'token-create',
  'token-list-timestamps',
  'auth-token-header',
  'auth-basic-owner-token',
  'auth-basic-any-name-token',
  'auth-basic-token-as-name',
  'auth-basic-token-x-oauth-basic',
  'auth-wrong-token-401',
  'user-get',
  'repo-create-sdk-priv',
  'repo-create-sdk-pub',
  'repo-create-sdk-signed',
  'repo-get',
  'repo-get-private-anonymous-404',
  'repo-list-mine',
  'repo-list-user-anonymous',
  'repo-search-paging',
  'git-push-with-token',
  'gpg-key-mismatching-email-refused',
  'gpg-key-matching-email',
  'gpg-key-get-by-id',
  'gpg-key-list',
  'commit-verification',
  'branch-protection',
  'migrate-service-gitea-auth-token',
  'migrate-without-token-fails',
  'gpg-key-delete',
  'token-delete',
];

function assertAllSteps(who: string, r: { status: number | null; out: string }): void {
  const failed = r.out.split('\n').filter((l) => l.startsWith('FAIL'));
  assert.deepEqual(failed, [], `${who}: ${r.out}`);
  for (const s of STEPS) assert.match(r.out, new RegExp(`^ok ${s}$`, 'm'), `${who}: step ${s} did not run: ${r.out}`);
  assert.equal(r.status, 0, `${who}: ${r.out}`);
}

test('the Gitea SDK program passes against a real Gitea 1.26 (the oracle for its expectations)', async (t) => {
  if (skip) return t.skip(skip);
  if (!bin || process.env['STRAIT_GITEA_SERVER'] === 'off') return t.skip('STRAIT_GITEA_SERVER=off: the Gitea server is not built');
  const gitea = await startGitea(bin);
  try {
    assertAllSteps('gitea', await drive(gitea.url, GITEA_ADMIN));
  } finally {
    await gitea.stop();
  }
});

test('githost passes every step of the Gitea SDK program', async (t) => {
  if (skip) return t.skip(skip);
  let gh: Started | undefined;
  try {
    gh = await startGithost({ allowLocalNetworks: true });
    assertAllSteps('githost', await drive(gh.url, { user: 'gitea_admin', password: 'admin-pass-1' }));
  } finally {
    await gh?.close();
  }
});
