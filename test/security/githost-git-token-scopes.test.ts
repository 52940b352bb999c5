// Attack: a token made for something else (read:user, say for a profile widget)
// leaks; its holder clones the owner's private repositories with it over git HTTP.
// git over HTTP must check token scopes as the API does: reads need read:repository,
// pushes write:repository, a public-only token reaches public repositories only.
// Real git clone/push and curl against githost on loopback.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { api, startGithost, toolEnv, type Started } from '../helpers/githost.js';
import { run } from '../helpers/run.js';

let gh: Started;
let dir: string;
let env: NodeJS.ProcessEnv;
const tokens: Record<string, string> = {};

const url = (token: string, repo = 'secret'): string => `${gh.url}/bob/${repo}.git`.replace('://', `://bob:${token}@`);

before(async () => {
  gh = await startGithost();
  dir = mkdtempSync(join(tmpdir(), 'strait-scopes-'));
  env = toolEnv(dir);
  const u = await api(gh.url, 'POST', '/api/v1/admin/users', {
    token: gh.adminToken,
    body: { username: 'bob', email: 'bob@example.com', password: 'bob-pass-12', must_change_password: false },
  });
  assert.equal(u.status, 201, JSON.stringify(u.body));
  for (const [name, priv] of [
    ['secret', true],
    ['open', false],
  ] as const) {
    const r = await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['bob', 'bob-pass-12'], body: { name, private: priv, auto_init: true } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  for (const scopes of [['read:user'], ['write:user', 'write:issue'], ['read:repository'], ['write:repository'], ['write:repository', 'public-only']]) {
    const t = await api(gh.url, 'POST', '/api/v1/users/bob/tokens', { basic: ['bob', 'bob-pass-12'], body: { name: scopes.join('+'), scopes } });
    assert.equal(t.status, 201, JSON.stringify(t.body));
    tokens[scopes.join('+')] = t.body.sha1 as string;
  }
});

after(async () => {
  await gh?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a token without read:repository cannot clone, fetch or list refs of a private repository over git HTTP', async () => {
  for (const name of ['read:user', 'write:user+write:issue']) {
    const clone = await run('git', ['clone', '-q', url(tokens[name]!), join(dir, `c-${name}`)], { env });
    assert.notEqual(clone.status, 0, `${name}: clone must fail`);
    assert.match(clone.stderr, /403|Token scope/, name);
    // the "token" scheme over plain HTTP, as a script would send it
    const refs = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      `Authorization: token ${tokens[name]!}`,
      `${gh.url}/bob/secret.git/info/refs?service=git-upload-pack`,
    ]);
    assert.equal(refs.stdout, '403', name);
    // a public repository with the token presented: refused too (as Gitea does; anonymous reads still work)
    const open = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      `Authorization: token ${tokens[name]!}`,
      `${gh.url}/bob/open.git/info/refs?service=git-upload-pack`,
    ]);
    assert.equal(open.stdout, '403', name);
  }
});

test('read:repository clones but cannot push; write:repository pushes; public-only never reaches a private repository', async () => {
  const work = join(dir, 'work');
  const clone = await run('git', ['clone', '-q', url(tokens['read:repository']!), work], { env });
  assert.equal(clone.status, 0, clone.stderr);
  for (const [k, v] of [
    ['user.name', 'Bob'],
    ['user.email', 'bob@example.com'],
  ])
    await run('git', ['config', k!, v!], { cwd: work, env });
  assert.equal((await run('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: work, env })).status, 0);
  const refused = await run('git', ['push', '-q', url(tokens['read:repository']!), 'HEAD:main'], { cwd: work, env });
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /403|Token scope/);
  const pushed = await run('git', ['push', '-q', url(tokens['write:repository']!), 'HEAD:main'], { cwd: work, env });
  assert.equal(pushed.status, 0, pushed.stderr);
  const pub = await run('git', ['ls-remote', url(tokens['write:repository+public-only']!, 'secret')], { env });
  assert.notEqual(pub.status, 0, 'public-only token listed a private repository');
  const pubOpen = await run('git', ['ls-remote', url(tokens['write:repository+public-only']!, 'open')], { env });
  assert.equal(pubOpen.status, 0, pubOpen.stderr);
  // the password still does everything
  assert.equal((await run('git', ['ls-remote', `${gh.url}/bob/secret.git`.replace('://', '://bob:bob-pass-12@')], { env })).status, 0);
});

test('the API checks public-only as git HTTP does: a private repository and its contents are 403, public ones answer', async () => {
  const t = tokens['write:repository+public-only']!;
  for (const path of ['/api/v1/repos/bob/secret']) {
    const r = await api(gh.url, 'GET', path, { token: t });
    assert.equal(r.status, 403, `${path}: ${JSON.stringify(r.body)}`);
    assert.match(String((r.body as { message?: unknown }).message), /token scope is limited to public repos/, path);
  }
  const open = await api(gh.url, 'GET', '/api/v1/repos/bob/open', { token: t });
  assert.equal(open.status, 200, JSON.stringify(open.body));
  // a repository-scoped token without public-only still reads the private one
  const full = await api(gh.url, 'GET', '/api/v1/repos/bob/secret', { token: tokens['read:repository']! });
  assert.equal(full.status, 200, JSON.stringify(full.body));
});
