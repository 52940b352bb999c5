// Attacks on githost's push check (docs/githost.md "Protected branches at push time"):
// the hook socket answers only a token the server handed to a running push, and a
// push cannot slip past the check by its environment or by a second push.
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { api, authURL, runAsync, startGithost, tempDir, type Started } from '../helpers/githost.js';
import { hasSshKeygen, sshKey, sshWorkTree } from '../helpers/ssh-signing.js';

const skip = hasSshKeygen() ? false : 'ssh-keygen is not installed';
let gh: Started;
let root: string;

function ask(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection(join(gh.stateDir, 'githost', 'hook.sock'));
    let out = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      out += d;
    });
    s.on('end', () => resolve(out));
    s.on('error', reject);
    s.end(request);
  });
}

before(async () => {
  if (skip) return;
  gh = await startGithost();
  root = tempDir('githost-push-check');
  await api(gh.url, 'POST', '/api/v1/admin/users', {
    token: gh.adminToken,
    body: { username: 'alice', email: 'alice@example.com', password: 'alice-pass-1', must_change_password: false },
  });
  await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['alice', 'alice-pass-1'], body: { name: 'app' } });
  await api(gh.url, 'POST', '/api/v1/repos/alice/app/branch_protections', {
    basic: ['alice', 'alice-pass-1'],
    body: { rule_name: 'main', enable_push: true, require_signed_commits: true },
  });
});

after(async () => {
  await gh?.close();
});

test('the hook socket refuses a request without a live push token, and garbage', { skip }, async () => {
  const update = `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/main\n`;
  for (const token of ['', 'x', 'f'.repeat(64)]) {
    const r = JSON.parse(await ask(`${JSON.stringify({ token, updates: update, objectDir: '', alternates: '' })}\n`)) as { ok: boolean; message: string };
    assert.equal(r.ok, false);
    assert.match(r.message, /not authorized by the server/);
  }
  const junk = JSON.parse(await ask('{not json\n')) as { ok: boolean };
  assert.equal(junk.ok, false);
});

test('an unsigned commit cannot be pushed with an environment that claims no check is needed', { skip }, async () => {
  const key = sshKey(root, 'k');
  const wt = sshWorkTree(root, key);
  const sha = wt.commit('unsigned', { sign: false });
  // the variables the hook reads come from the server, not from the client's environment
  const env = {
    PATH: process.env['PATH'],
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    STRAIT_GITHOST_CHECK: 'none',
    STRAIT_GITHOST_PUSH: 'authorized',
  };
  const r = await runAsync('git', ['push', authURL(gh.url, 'alice', 'alice-pass-1', '/alice/app.git'), 'main'], { cwd: wt.dir, env });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`unverified commit ${sha}`));
});
