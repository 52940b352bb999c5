// Real git and gpg against the code-hosting server (docs/githost.md): signed commits pushed
// and cloned, verification through the API, refused pushes that store nothing,
// GPG key e-mail rule, push notification (in-process and webhook).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { PushEvent } from '../../src/githost/server/index.js';
import { verifyCommitSignature } from '../../src/platform/signatures/index.js';
import { Gpg, api, authURL, gitWorkTree, ok, run, runAsync, startGithost, tempDir, toolEnv, type JsonBody, type Started } from '../helpers/githost.js';

let gh: Started;
let gpg: Gpg;
let root: string;
let aliceKey: string;
const events: PushEvent[] = [];
const hooks: JsonBody[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => {
    body += d;
  });
  req.on('end', () => {
    hooks.push({ event: req.headers['x-gitea-event'], ...JSON.parse(body) });
    res.end('ok');
  });
});

const serverRepo = (owner: string, repo: string) => join(gh.stateDir, 'githost', 'repos', owner, `${repo}.git`);

before(async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const hookURL = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  gh = await startGithost({ pushWebhooks: [hookURL] });
  gh.server.onPush((e) => events.push(e));
  root = tempDir('githost-git');
  gpg = new Gpg(root);
  for (const [name, email] of [
    ['alice', 'alice@example.com'],
    ['bob', 'bob@example.com'],
    ['carol', 'carol@example.com'],
  ]) {
    const r = await api(gh.url, 'POST', '/api/v1/admin/users', {
      token: gh.adminToken,
      body: { username: name, email, password: `${name}-pass-1`, must_change_password: false },
    });
    assert.equal(r.status, 201);
  }
  aliceKey = gpg.newKey('Alice', 'alice@example.com');
  const repo = await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'app' } });
  assert.equal(repo.status, 201, JSON.stringify(repo.body));
});

after(async () => {
  gpg.close();
  receiver.close();
  await gh.close();
});

test("a GPG key whose e-mail differs from the user's is refused with Gitea's error; a matching one is accepted", async () => {
  const otherKey = gpg.newKey('Alice Elsewhere', 'alice@other.example.org');
  const refused = await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'], body: { armored_public_key: gpg.armor(otherKey) } });
  assert.equal(refused.status, 404);
  assert.match(refused.body.message, /^None of the emails attached to the GPG key could be found/);
  const accepted = await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'], body: { armored_public_key: gpg.armor(aliceKey) } });
  assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
  assert.equal(accepted.body.key_id, aliceKey);
  assert.equal(accepted.body.primary_key_id, '');
  assert.deepEqual(accepted.body.emails, [{ email: 'alice@example.com', verified: true }]);
  assert.equal(accepted.body.can_sign, true);
  assert.deepEqual(accepted.body.subkeys, []);
  assert.match(accepted.body.public_key, /BEGIN PGP PUBLIC KEY BLOCK/);
  const again = await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'], body: { armored_public_key: gpg.armor(aliceKey) } });
  assert.equal(again.status, 422);
  assert.equal(again.body.message, 'A key with the same id already exists');
  const list = await api(gh.url, 'GET', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'] });
  assert.deepEqual(
    list.body.map((k: { key_id: string }) => k.key_id),
    [aliceKey],
  );
  const garbage = await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['alice', 'alice-pass-1'], body: { armored_public_key: 'hello' } });
  assert.equal(garbage.status, 422);
});

test('git pushes signed commits (git commit -S), clones them back, and the API verifies the signature', async () => {
  const wt = gitWorkTree(root, gpg.env, { name: 'Alice', email: 'alice@example.com', keyID: aliceKey });
  ok('sh', ['-c', 'echo "kind: ConfigMap" > app.yaml'], { cwd: wt.dir, env: gpg.env });
  wt.git('add', 'app.yaml');
  wt.git('commit', '-q', '-S', '-m', 'signed commit');
  const signedSha = wt.git('rev-parse', 'HEAD').trim();
  wt.git('commit', '-q', '--allow-empty', '--no-gpg-sign', '-m', 'unsigned commit');
  const unsignedSha = wt.git('rev-parse', 'HEAD').trim();
  const push = await runAsync('git', ['push', authURL(gh.url, 'alice', 'alice-pass-1', '/alice/app.git'), 'main'], { cwd: wt.dir, env: gpg.env });
  assert.equal(push.status, 0, push.stderr);

  const cloneDir = join(root, 'clone');
  const clone = await runAsync('git', ['clone', '-q', `${gh.url}/alice/app.git`, cloneDir], { env: gpg.env });
  assert.equal(clone.status, 0, clone.stderr);
  assert.equal(ok('git', ['rev-parse', 'HEAD~1'], { cwd: cloneDir, env: gpg.env }).trim(), signedSha);
  assert.match(
    ok('git', ['verify-commit', signedSha], { cwd: cloneDir, env: gpg.env }) + run('git', ['verify-commit', signedSha], { cwd: cloneDir, env: gpg.env }).stderr,
    /Good signature/,
  );

  // the signatures module agrees with gpg on the object git stored
  const raw = ok('git', ['cat-file', 'commit', signedSha], { cwd: cloneDir, env: gpg.env });
  const check = await verifyCommitSignature(raw, [gpg.armor(aliceKey)]);
  assert.equal(check.status, 'valid', check.reason);
  assert.equal(check.keyID, aliceKey);

  const signed = await api(gh.url, 'GET', `/api/v1/repos/alice/app/git/commits/${signedSha}`, { basic: ['alice', 'alice-pass-1'] });
  assert.equal(signed.status, 200);
  assert.equal(signed.body.sha, signedSha);
  assert.equal(signed.body.commit.message, 'signed commit\n');
  assert.deepEqual(
    { verified: signed.body.commit.verification.verified, reason: signed.body.commit.verification.reason, signer: signed.body.commit.verification.signer },
    { verified: true, reason: `alice / ${aliceKey}`, signer: { name: 'alice', email: 'alice@example.com', username: 'alice' } },
  );
  assert.match(signed.body.commit.verification.signature, /BEGIN PGP SIGNATURE/);
  assert.ok(!signed.body.commit.verification.payload.includes('gpgsig'));
  const unsigned = await api(gh.url, 'GET', `/api/v1/repos/alice/app/git/commits/${unsignedSha}`, {});
  assert.equal(unsigned.body.commit.verification.verified, false);
  assert.equal(unsigned.body.commit.verification.reason, 'gpg.error.not_signed_commit');
  const byRef = await api(gh.url, 'GET', '/api/v1/repos/alice/app/git/commits/main', {});
  assert.equal(byRef.body.sha, unsignedSha);
  assert.equal((await api(gh.url, 'GET', `/api/v1/repos/alice/app/git/commits/${'0'.repeat(40)}`, {})).status, 404);

  assert.ok(
    events.some(
      (e) =>
        e.owner === 'alice' && e.repo === 'app' && e.ref === 'refs/heads/main' && e.newSha === unsignedSha && /^0{40}$/.test(e.oldSha) && e.pusher === 'alice',
    ),
    JSON.stringify(events),
  );
  for (let i = 0; i < 50 && hooks.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(hooks[0]?.event, 'push');
  assert.equal(hooks[0]?.ref, 'refs/heads/main');
  assert.equal(hooks[0]?.after, unsignedSha);
  assert.equal(hooks[0]?.repository.full_name, 'alice/app');
});

test('a push by a user without write access is refused with a message git shows, and nothing is stored', async () => {
  const before = ok('git', ['for-each-ref'], { cwd: serverRepo('alice', 'app'), env: gpg.env });
  const eventsBefore = events.length;
  const wt = gitWorkTree(root, gpg.env, { name: 'Bob', email: 'bob@example.com' });
  wt.git('fetch', '-q', `${serverRepo('alice', 'app')}`, 'main');
  wt.git('reset', '-q', '--hard', 'FETCH_HEAD');
  ok('sh', ['-c', 'echo evil > evil.yaml'], { cwd: wt.dir, env: gpg.env });
  wt.git('add', 'evil.yaml');
  wt.git('commit', '-q', '-m', 'bob was here');
  const bobSha = wt.git('rev-parse', 'HEAD').trim();
  for (const [label, user, secret] of [['password', 'bob', 'bob-pass-1']] as const) {
    const r = await runAsync('git', ['push', authURL(gh.url, user, secret, '/alice/app.git'), 'main:main', 'main:refs/heads/bob'], {
      cwd: wt.dir,
      env: gpg.env,
    });
    assert.notEqual(r.status, 0, label);
    assert.match(r.stderr, /remote: User permission denied for writing/, label);
    assert.match(r.stderr, /403/, label);
  }
  const anon = await runAsync('git', ['push', `${gh.url}/alice/app.git`, 'main:refs/heads/anon'], { cwd: wt.dir, env: gpg.env });
  assert.notEqual(anon.status, 0);
  assert.equal(ok('git', ['for-each-ref'], { cwd: serverRepo('alice', 'app'), env: gpg.env }), before);
  assert.notEqual(run('git', ['cat-file', '-e', bobSha], { cwd: serverRepo('alice', 'app'), env: gpg.env }).status, 0, "bob's commit object is not stored");
  assert.equal(events.length, eventsBefore);

  // the pre-receive hook refuses a receive-pack the server did not authorize (here: a
  // local push straight into the bare repository), and git's quarantine drops the objects
  const direct = run('git', ['push', serverRepo('alice', 'app'), 'main:refs/heads/direct'], { cwd: wt.dir, env: gpg.env });
  assert.notEqual(direct.status, 0);
  assert.match(direct.stderr, /push refused: this push was not authorized by the server/);
  assert.notEqual(run('git', ['cat-file', '-e', bobSha], { cwd: serverRepo('alice', 'app'), env: gpg.env }).status, 0);
  assert.equal(ok('git', ['for-each-ref'], { cwd: serverRepo('alice', 'app'), env: gpg.env }), before);

  // a collaborator with write access and an administrator may push; a token works as password
  const collab = await api(gh.url, 'PUT', '/api/v1/repos/alice/app/collaborators/carol', { basic: ['alice', 'alice-pass-1'], body: { permission: 'write' } });
  assert.equal(collab.status, 204);
  const carolPush = await runAsync('git', ['push', authURL(gh.url, 'carol', 'carol-pass-1', '/alice/app.git'), 'main:refs/heads/carol'], {
    cwd: wt.dir,
    env: gpg.env,
  });
  assert.equal(carolPush.status, 0, carolPush.stderr);
  const adminPush = await runAsync('git', ['push', authURL(gh.url, 'gitea_admin', gh.adminToken, '/alice/app.git'), 'main:refs/heads/admin'], {
    cwd: wt.dir,
    env: gpg.env,
  });
  assert.equal(adminPush.status, 0, adminPush.stderr);
});

test('git over HTTP asks for credentials (401 + WWW-Authenticate) for pushes and private repositories', async () => {
  const info = await fetch(`${gh.url}/alice/app.git/info/refs?service=git-receive-pack`);
  assert.equal(info.status, 401);
  assert.match(info.headers.get('www-authenticate') ?? '', /^Basic realm="/);
  await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'private', private: true } });
  const priv = await runAsync('git', ['ls-remote', `${gh.url}/alice/private.git`], { env: toolEnv(root) });
  assert.notEqual(priv.status, 0);
  assert.match(priv.stderr, /could not read Username|Authentication failed/);
  const bob = await runAsync('git', ['ls-remote', authURL(gh.url, 'bob', 'bob-pass-1', '/alice/private.git')], { env: toolEnv(root) });
  assert.notEqual(bob.status, 0);
  const wrong = await runAsync('git', ['ls-remote', authURL(gh.url, 'alice', 'wrong-password', '/alice/private.git')], { env: toolEnv(root) });
  assert.match(wrong.stderr, /Authentication failed/);
  const alice = await runAsync('git', ['ls-remote', authURL(gh.url, 'alice', 'alice-pass-1', '/alice/private.git')], { env: toolEnv(root) });
  assert.equal(alice.status, 0, alice.stderr);
});

test('the first push of another branch becomes the default branch, so HEAD resolves (as in Gitea)', async () => {
  const made = await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'legacy' } });
  assert.equal(made.body.default_branch, 'main');
  const wt = gitWorkTree(root, gpg.env, { name: 'Alice', email: 'alice@example.com' });
  wt.git('checkout', '-q', '-b', 'master');
  wt.git('commit', '-q', '--allow-empty', '-m', 'on master');
  const p = await runAsync('git', ['push', authURL(gh.url, 'alice', 'alice-pass-1', '/alice/legacy.git'), 'master'], { cwd: wt.dir, env: gpg.env });
  assert.equal(p.status, 0, p.stderr);
  const repo = await api(gh.url, 'GET', '/api/v1/repos/alice/legacy', {});
  assert.equal(repo.body.default_branch, 'master');
  assert.equal(repo.body.empty, false);
  const head = await api(gh.url, 'GET', '/api/v1/repos/alice/legacy/git/commits/HEAD', {});
  assert.equal(head.status, 200);
  assert.equal(head.body.sha, wt.git('rev-parse', 'HEAD').trim());
});
