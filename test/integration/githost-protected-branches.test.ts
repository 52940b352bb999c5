// Branch protection with "require signed commits" enforced at `git push` (docs/githost.md),
// with Gitea's API shapes (branch_protections, /user/keys), real git, real ssh-keygen and
// real gpg signatures: what a user sees is git's own exit status and stderr.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Gpg, api, authURL, runAsync, startGithost, tempDir, type Started } from '../helpers/githost.js';
import { hasSshKeygen, sshKey, sshWorkTree, type SshTestKey } from '../helpers/ssh-signing.js';

const skip = hasSshKeygen() ? false : 'ssh-keygen is not installed';
let gh: Started;
let root: string;
let gpg: Gpg;
let aliceSsh: SshTestKey;
let strangerSsh: SshTestKey;
let aliceGpg: string;
const alice: [string, string] = ['alice', 'alice-pass-1'];

/** Gitea 1.26's BranchProtection fields (modules/structs/repo_branch.go), sorted. */
const GITEA_FIELDS = [
  'approvals_whitelist_teams',
  'approvals_whitelist_username',
  'block_admin_merge_override',
  'block_on_official_review_requests',
  'block_on_outdated_branch',
  'block_on_rejected_reviews',
  'branch_name',
  'created_at',
  'dismiss_stale_approvals',
  'enable_approvals_whitelist',
  'enable_force_push',
  'enable_force_push_allowlist',
  'enable_merge_whitelist',
  'enable_push',
  'enable_push_whitelist',
  'enable_status_check',
  'force_push_allowlist_deploy_keys',
  'force_push_allowlist_teams',
  'force_push_allowlist_usernames',
  'ignore_stale_approvals',
  'merge_whitelist_teams',
  'merge_whitelist_usernames',
  'priority',
  'protected_file_patterns',
  'push_whitelist_deploy_keys',
  'push_whitelist_teams',
  'push_whitelist_usernames',
  'require_signed_commits',
  'required_approvals',
  'rule_name',
  'status_check_contexts',
  'unprotected_file_patterns',
  'updated_at',
];

async function push(dir: string, ...refspecs: string[]): Promise<{ status: number | null; stderr: string }> {
  const env = { PATH: process.env['PATH'], HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LANG: 'C' };
  const r = await runAsync('git', ['push', authURL(gh.url, ...alice, '/alice/app.git'), ...refspecs], { cwd: dir, env });
  return { status: r.status, stderr: r.stderr };
}

before(async () => {
  if (skip) return;
  gh = await startGithost();
  root = tempDir('githost-protect');
  gpg = new Gpg(root);
  for (const [name, email] of [
    ['alice', 'alice@example.com'],
    ['bob', 'bob@example.com'],
  ]) {
    const r = await api(gh.url, 'POST', '/api/v1/admin/users', {
      token: gh.adminToken,
      body: { username: name, email, password: `${name}-pass-1`, must_change_password: false },
    });
    assert.equal(r.status, 201);
  }
  assert.equal((await api(gh.url, 'POST', '/api/v1/user/repos', { basic: alice, body: { name: 'app' } })).status, 201);
  aliceSsh = sshKey(root, 'alice-ssh');
  strangerSsh = sshKey(root, 'stranger-ssh');
  aliceGpg = gpg.newKey('Alice', 'alice@example.com');
  assert.equal((await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: alice, body: { armored_public_key: gpg.armor(aliceGpg) } })).status, 201);
});

after(async () => {
  gpg?.close();
  await gh?.close();
});

describe("SSH keys: Gitea's /user/keys", { skip }, () => {
  test('add, list (with fingerprint filter), get, refuse duplicates and bad keys, delete', async () => {
    const added = await api(gh.url, 'POST', '/api/v1/user/keys', { basic: alice, body: { title: 'laptop', key: aliceSsh.pub } });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.equal(added.body.fingerprint, aliceSsh.fingerprint);
    assert.equal(added.body.title, 'laptop');
    assert.equal(added.body.key_type, 'user');
    assert.equal(added.body.user.login, 'alice');
    assert.equal(added.body.key, aliceSsh.pub.split(' ').slice(0, 2).join(' '));
    assert.equal(added.body.url, `${gh.url}/api/v1/user/keys/${added.body.id}`);
    const dup = await api(gh.url, 'POST', '/api/v1/user/keys', { basic: alice, body: { title: 'again', key: aliceSsh.pub } });
    assert.deepEqual([dup.status, dup.body.message], [422, 'Key content has been used as non-deploy key']);
    const title = await api(gh.url, 'POST', '/api/v1/user/keys', { basic: alice, body: { title: 'laptop', key: strangerSsh.pub } });
    assert.deepEqual([title.status, title.body.message], [422, 'Key title has been used']);
    const bad = await api(gh.url, 'POST', '/api/v1/user/keys', { basic: alice, body: { title: 'bad', key: 'ssh-ed25519 AAAA' } });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /^Invalid key content: /);
    const list = await api(gh.url, 'GET', '/api/v1/user/keys', { basic: alice });
    assert.deepEqual(
      list.body.map((k: { fingerprint: string }) => k.fingerprint),
      [aliceSsh.fingerprint],
    );
    const byFp = await api(gh.url, 'GET', `/api/v1/users/alice/keys?fingerprint=${encodeURIComponent(aliceSsh.fingerprint)}`, { basic: ['bob', 'bob-pass-1'] });
    assert.equal(byFp.body.length, 1);
    assert.equal(byFp.body[0].user, undefined, 'owner details only for the owner or an admin');
    const bobDelete = await api(gh.url, 'DELETE', `/api/v1/user/keys/${added.body.id}`, { basic: ['bob', 'bob-pass-1'] });
    assert.deepEqual([bobDelete.status, bobDelete.body.message], [403, 'You do not have access to this key']);
    const tmp = await api(gh.url, 'POST', '/api/v1/user/keys', { basic: alice, body: { title: 'tmp', key: sshKey(root, 'tmp').pub } });
    assert.equal((await api(gh.url, 'DELETE', `/api/v1/user/keys/${tmp.body.id}`, { basic: alice })).status, 204);
    assert.equal((await api(gh.url, 'GET', `/api/v1/user/keys/${tmp.body.id}`, { basic: alice })).status, 404);
  });
});

describe("branch protections: Gitea's API shape", { skip }, () => {
  test('create, get, list, edit and delete answer as Gitea does', async () => {
    const created = await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', {
      basic: alice,
      body: { rule_name: 'scratch', enable_push: true, require_signed_commits: true, push_whitelist_usernames: ['bob'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(Object.keys(created.body).sort(), GITEA_FIELDS);
    assert.equal(created.body.branch_name, 'scratch');
    assert.equal(created.body.require_signed_commits, true);
    assert.equal(created.body.enable_push_whitelist, false, 'a whitelist is on only when asked (Gitea derives it)');
    const again = await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', { basic: alice, body: { rule_name: 'scratch' } });
    assert.deepEqual([again.status, again.body.message], [403, 'Branch protection already exist']);
    const empty = await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', { basic: alice, body: {} });
    assert.deepEqual([empty.status, empty.body.message], [400, 'both rule_name and branch_name are empty']);
    const unknownUser = await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', {
      basic: alice,
      body: { rule_name: 'x', push_whitelist_usernames: ['nobody'] },
    });
    assert.equal(unknownUser.status, 422);
    const glob = await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', { basic: alice, body: { rule_name: 'release/*' } });
    assert.equal(glob.body.branch_name, '', 'a glob rule has no branch_name');
    assert.equal((await api(gh.url, 'GET', '/api/v1/repos/alice/app/branch_protections/release%2F*', { basic: alice })).status, 200);
    const edited = await api(gh.url, 'PATCH', '/api/v1/repos/alice/app/branch_protections/scratch', {
      basic: alice,
      body: { require_signed_commits: false, priority: 3 },
    });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.require_signed_commits, false);
    assert.equal(edited.body.enable_push, true, 'fields not in the PATCH body keep their value');
    assert.equal(edited.body.priority, 3);
    const list = await api(gh.url, 'GET', '/api/v1/repos/alice/app/branch_protections', { basic: alice });
    assert.deepEqual(
      list.body.map((p: { rule_name: string }) => p.rule_name),
      ['release/*', 'scratch'],
    );
    assert.equal((await api(gh.url, 'GET', '/api/v1/repos/alice/app/branch_protections', { basic: ['bob', 'bob-pass-1'] })).status, 403);
    assert.equal((await api(gh.url, 'DELETE', '/api/v1/repos/alice/app/branch_protections/scratch', { basic: alice })).status, 204);
    assert.equal((await api(gh.url, 'DELETE', '/api/v1/repos/alice/app/branch_protections/release%2F*', { basic: alice })).status, 204);
    assert.equal((await api(gh.url, 'GET', '/api/v1/repos/alice/app/branch_protections/scratch', { basic: alice })).status, 404);
  });
});

describe('require_signed_commits at git push', { skip }, () => {
  let wt: ReturnType<typeof sshWorkTree>;
  before(async () => {
    if (skip) return;
    wt = sshWorkTree(root, aliceSsh);
    wt.commit('first, signed');
    assert.equal((await push(wt.dir, 'main')).status, 0);
    const r = await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', {
      basic: alice,
      body: { rule_name: 'main', enable_push: true, require_signed_commits: true },
    });
    assert.equal(r.status, 201);
    await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', {
      basic: alice,
      body: { rule_name: 'release*', enable_push: true, require_signed_commits: true },
    });
  });

  test('an unsigned push to the protected branch is refused: git exits non-zero and its stderr names the commit', async () => {
    const sha = wt.commit('unsigned', { sign: false });
    const r = await push(wt.dir, 'main');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`remote: branch main is protected from unverified commit ${sha}: it is not signed`));
    assert.match(r.stderr, /\[remote rejected\] main -> main \(pre-receive hook declined\)/);
    wt.git('reset', '-q', '--hard', 'HEAD~1');
  });

  test('an SSH-signed push by a key registered to the committer is accepted', async () => {
    const sha = wt.commit("signed with alice's registered SSH key");
    const r = await push(wt.dir, 'main');
    assert.equal(r.status, 0, r.stderr);
    const commit = await api(gh.url, 'GET', `/api/v1/repos/alice/app/git/commits/${sha}`, { basic: alice });
    assert.equal(commit.body.commit.verification.verified, true, JSON.stringify(commit.body.commit.verification));
    assert.equal(commit.body.commit.verification.reason, `alice / ${aliceSsh.fingerprint}`);
  });

  test('a GPG-signed push by a key registered to the committer is accepted', async () => {
    const env = { ...gpg.env };
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['-c', 'gpg.format=openpgp', '-c', `user.signingkey=${aliceGpg}`, 'commit', '-q', '--allow-empty', '-S', '-m', 'gpg signed'], {
      cwd: wt.dir,
      env: { ...env, GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    const r = await push(wt.dir, 'main');
    assert.equal(r.status, 0, r.stderr);
  });

  test('a commit signed by an SSH key no githost user registered is refused, naming the key and the user', async () => {
    const sha = wt.commit('signed by a stranger', { key: strangerSsh });
    const r = await push(wt.dir, 'main');
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      new RegExp(
        `unverified commit ${sha}: it is signed with SSH key ${strangerSsh.fingerprint.replace(/[+/]/g, '.')}, which is not a key of githost user alice`,
      ),
    );
    wt.git('reset', '-q', '--hard', 'HEAD~1');
  });

  test('the first bad commit of several is named, and nothing is stored', async () => {
    const good = wt.commit('good');
    const bad = wt.commit('bad', { sign: false });
    wt.commit('good again');
    const r = await push(wt.dir, 'main');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, new RegExp(`unverified commit ${bad}`));
    const server = await api(gh.url, 'GET', `/api/v1/repos/alice/app/git/commits/${good}`, { basic: alice });
    assert.equal(server.status, 404, 'a refused push stores nothing');
    wt.git('reset', '-q', '--hard', 'HEAD~3');
  });

  test("force push and deletion of the protected branch are refused (Gitea's messages)", async () => {
    wt.git('reset', '-q', '--hard', 'HEAD~1');
    wt.commit('rewritten, signed');
    const force = await push(wt.dir, '--force', 'main');
    assert.notEqual(force.status, 0);
    assert.match(force.stderr, /remote: branch main is protected from force push/);
    const del = await push(wt.dir, ':main');
    assert.notEqual(del.status, 0);
    assert.match(del.stderr, /remote: branch main is protected from deletion/);
    // async: a synchronous git against the server in this process would block it
    const env = { PATH: process.env['PATH'], HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    assert.equal((await runAsync('git', ['fetch', '-q', authURL(gh.url, ...alice, '/alice/app.git'), 'main'], { cwd: wt.dir, env })).status, 0);
    wt.git('reset', '-q', '--hard', 'FETCH_HEAD');
  });

  test('an unsigned commit cannot enter a protected branch through an unprotected one', async () => {
    const sha = wt.commit('unsigned via a feature branch', { sign: false });
    const feature = await push(wt.dir, 'HEAD:refs/heads/feature');
    assert.equal(feature.status, 0, feature.stderr);
    const release = await push(wt.dir, 'HEAD:refs/heads/release-1');
    assert.notEqual(release.status, 0);
    assert.match(release.stderr, new RegExp(`branch release-1 is protected from unverified commit ${sha}: it is not signed`));
    const ff = await push(wt.dir, 'HEAD:main');
    assert.notEqual(ff.status, 0);
    assert.match(ff.stderr, new RegExp(`branch main is protected from unverified commit ${sha}`));
    wt.git('reset', '-q', '--hard', 'HEAD~1');
  });

  test('enable_push=false refuses even signed pushes; a push whitelist lets its users through', async () => {
    assert.equal((await api(gh.url, 'PATCH', '/api/v1/repos/alice/app/branch_protections/main', { basic: alice, body: { enable_push: false } })).status, 200);
    wt.commit('signed, but pushing is off');
    const r = await push(wt.dir, 'main');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /remote: Not allowed to push to protected branch main/);
    await api(gh.url, 'PATCH', '/api/v1/repos/alice/app/branch_protections/main', {
      basic: alice,
      body: { enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: ['alice'] },
    });
    assert.equal((await push(wt.dir, 'main')).status, 0);
  });

  test('once the rule is deleted, unsigned pushes go through again', async () => {
    assert.equal((await api(gh.url, 'DELETE', '/api/v1/repos/alice/app/branch_protections/main', { basic: alice })).status, 204);
    wt.commit('unsigned, unprotected', { sign: false });
    const r = await push(wt.dir, 'main');
    assert.equal(r.status, 0, r.stderr);
  });
});
