// Attack: with local-path import on (allowImportLocal, as in the world), a plain user
// "migrates" another user's private repository straight from githost's disk
// (<state>/githost/repos/<owner>/<repo>.git) into an account of their own and clones
// it. Local import is for site admins only, as in Gitea, and never from inside
// githost's own data directory, however the path is spelt (.., symlinks, file: URLs).
// Through the real API (POST /api/v1/repos/migrate) and real git clone.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { api, authURL, gitWorkTree, ok, runAsync, startGithost, tempDir, toolEnv, type Started } from '../helpers/githost.js';

let gh: Started;
let root: string;
let env: NodeJS.ProcessEnv;
let diary: string;

before(async () => {
  gh = await startGithost({ allowLocalNetworks: true, allowImportLocal: true });
  root = tempDir('local-import');
  env = toolEnv(root);
  for (const name of ['bob', 'mallory']) {
    const r = await api(gh.url, 'POST', '/api/v1/admin/users', {
      token: gh.adminToken,
      body: { username: name, email: `${name}@example.com`, password: `${name}-pass-12`, must_change_password: false },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  const r = await api(gh.url, 'POST', '/api/v1/user/repos', {
    basic: ['bob', 'bob-pass-12'],
    body: { name: 'diary', private: true, auto_init: true, description: 'private thoughts' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  diary = join(gh.stateDir, 'githost', 'repos', 'bob', 'diary.git');
  assert.ok(existsSync(join(diary, 'HEAD')));
});

after(async () => {
  await gh?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const migrate = (who: { token?: string; basic?: [string, string] }, addr: string, name: string) =>
  api(gh.url, 'POST', '/api/v1/repos/migrate', { ...who, body: { clone_addr: addr, repo_name: name, private: false } });

test("a non-admin cannot import another user's private repository from githost's disk", async () => {
  for (const [i, addr] of [diary, `file://${diary}`].entries()) {
    const r = await migrate({ basic: ['mallory', 'mallory-pass-12'] }, addr, `loot${i}`);
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.message, 'You are not allowed to import local repositories.');
    const clone = await runAsync('git', ['clone', '-q', authURL(gh.url, 'mallory', 'mallory-pass-12', `/mallory/loot${i}.git`), join(root, `loot${i}`)], {
      env,
    });
    assert.notEqual(clone.status, 0, 'the copy must not exist');
  }
  // a local path outside githost is refused to a non-admin as well
  const wt = gitWorkTree(root, env, { name: 'M', email: 'mallory@example.com' });
  ok('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: wt.dir, env });
  assert.equal((await migrate({ basic: ['mallory', 'mallory-pass-12'] }, wt.dir, 'mine')).status, 422);
});

test("not even an admin imports from githost's own data directory, whatever the spelling", async () => {
  const link = join(root, 'innocent');
  symlinkSync(join(gh.stateDir, 'githost', 'repos'), link);
  const nested = join(root, 'nest');
  mkdirSync(nested);
  symlinkSync(diary, join(nested, 'repo.git'));
  const addrs = [
    diary,
    join(gh.stateDir, 'githost', 'tmp') + '/../repos/bob/diary.git',
    `${link}/bob/diary.git`,
    join(nested, 'repo.git'),
    `file://${gh.stateDir}/githost/tmp/%2e%2e/repos/bob/diary.git`,
    join(gh.stateDir, 'githost'),
  ];
  for (const [i, addr] of addrs.entries()) {
    const r = await migrate({ token: gh.adminToken }, addr, `admin-loot${i}`);
    assert.equal(r.status, 422, `${addr}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, /own data directory/, addr);
    assert.equal((await api(gh.url, 'GET', `/api/v1/repos/gitea_admin/admin-loot${i}`, { token: gh.adminToken })).status, 404);
  }
  // an admin still imports a repository that lives elsewhere on the machine
  const wt = gitWorkTree(root, env, { name: 'A', email: 'admin@example.com' });
  ok('git', ['commit', '-q', '--allow-empty', '-m', 'outside'], { cwd: wt.dir, env });
  const ok201 = await migrate({ token: gh.adminToken }, join(wt.dir, '.git'), 'outside');
  assert.equal(ok201.status, 201, JSON.stringify(ok201.body));
});
