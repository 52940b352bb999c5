// Migration safety (docs/githost.md): POST /api/v1/repos/migrate with the real git. Sources on loopback or
// private networks, local paths and file: URLs are refused by default; the settings
// allowLocalNetworks / allowImportLocal open them; redirects are never followed.
// Every source here is on loopback (another githost instance or a local redirector).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isNonPublicAddress } from '../../src/githost/server/index.js';
import { api, authURL, gitWorkTree, ok, runAsync, startGithost, tempDir, toolEnv, type Started } from '../helpers/githost.js';

let source: Started;
let open: Started;
let root: string;
let env: NodeJS.ProcessEnv;
let headSha: string;
const redirector = createServer((req, res) => {
  res.writeHead(302, { Location: `${source.url}${req.url ?? '/'}` });
  res.end();
});
let redirectURL: string;

before(async () => {
  source = await startGithost();
  open = await startGithost({ allowLocalNetworks: true, allowImportLocal: true });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
  redirectURL = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
  root = tempDir('githost-migrate');
  env = toolEnv(root);
  for (const name of ['pub', 'priv']) {
    const r = await api(source.url, 'POST', '/api/v1/user/repos', { token: source.adminToken, body: { name, private: name === 'priv' } });
    assert.equal(r.status, 201);
  }
  const wt = gitWorkTree(root, env, { name: 'Admin', email: 'admin@example.com' });
  ok('sh', ['-c', 'echo data > f && git add f && git commit -q -m one && git tag v1'], { cwd: wt.dir, env });
  headSha = wt.git('rev-parse', 'HEAD').trim();
  for (const name of ['pub', 'priv']) {
    const p = await runAsync('git', ['push', '-q', authURL(source.url, 'gitea_admin', 'admin-pass-1', `/gitea_admin/${name}.git`), 'main', 'v1'], {
      cwd: wt.dir,
      env,
    });
    assert.equal(p.status, 0, p.stderr);
  }
});

after(async () => {
  redirector.close();
  await source.close();
  await open.close();
});

test('with the default settings, loopback hosts, local paths, file: URLs and other protocols are refused (422)', async () => {
  const port = new URL(source.url).port;
  const cases: { name: string; addr: string; message: RegExp }[] = [
    { name: 'loopback IPv4', addr: `${source.url}/gitea_admin/pub.git`, message: /^You can not import from disallowed hosts\.$/ },
    { name: 'localhost name', addr: `http://localhost:${port}/gitea_admin/pub.git`, message: /disallowed hosts/ },
    { name: 'IPv6 loopback', addr: `http://[::1]:${port}/gitea_admin/pub.git`, message: /disallowed hosts/ },
    { name: 'hex-encoded loopback', addr: `http://0x7f000001:${port}/gitea_admin/pub.git`, message: /disallowed hosts/ },
    { name: 'IPv4-mapped IPv6 loopback', addr: `http://[::ffff:127.0.0.1]:${port}/x.git`, message: /disallowed hosts/ },
    { name: 'private range', addr: 'http://10.1.2.3/x.git', message: /disallowed hosts/ },
    { name: 'link-local metadata address', addr: 'http://169.254.169.254/latest', message: /disallowed hosts/ },
    {
      name: 'absolute local path',
      addr: join(source.stateDir, 'githost', 'repos', 'gitea_admin', 'pub.git'),
      message: /^You are not allowed to import local repositories\.$/,
    },
    { name: 'file: URL', addr: `file://${join(source.stateDir, 'githost', 'repos', 'gitea_admin', 'pub.git')}`, message: /not allowed to import local/ },
    { name: 'relative path', addr: '../../etc', message: /not allowed to import local/ },
    { name: 'ext:: transport', addr: 'ext::sh -c touch% /tmp/pwned', message: /protocol .* is not allowed|not allowed to import local/ },
    { name: 'ssh URL', addr: 'ssh://git@example.com/x.git', message: /protocol "ssh:" is not allowed/ },
  ];
  for (const c of cases) {
    const r = await api(source.url, 'POST', '/api/v1/repos/migrate', { token: source.adminToken, body: { clone_addr: c.addr, repo_name: 'copy', uid: 1 } });
    assert.equal(r.status, 422, `${c.name}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.message, c.message, c.name);
  }
  assert.equal((await api(source.url, 'GET', '/api/v1/repos/gitea_admin/copy', { token: source.adminToken })).status, 404);
});

test('with allowLocalNetworks a loopback source migrates (auth for a private source), credentials are not kept', async () => {
  const r = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: {
      clone_addr: `${source.url}/gitea_admin/priv.git`,
      auth_username: 'gitea_admin',
      auth_password: 'admin-pass-1',
      description: 'copied',
      issues: false,
      milestones: false,
      mirror: false,
      private: true,
      repo_name: 'copy',
      uid: 1,
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.full_name, 'gitea_admin/copy');
  assert.equal(r.body.description, 'copied');
  assert.equal(r.body.private, true);
  assert.equal(r.body.empty, false);
  assert.equal(r.body.original_url, `${source.url}/gitea_admin/priv.git`);
  const dir = join(open.stateDir, 'githost', 'repos', 'gitea_admin', 'copy.git');
  assert.equal(ok('git', ['rev-parse', 'main'], { cwd: dir, env }).trim(), headSha);
  assert.equal(ok('git', ['rev-parse', 'v1^{commit}'], { cwd: dir, env }).trim(), headSha);
  assert.doesNotMatch(readFileSync(join(dir, 'config'), 'utf8'), /admin-pass-1|Authorization/);
  ok('git', ['fsck', '--strict'], { cwd: dir, env });

  const dup = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: { clone_addr: `${source.url}/gitea_admin/pub.git`, repo_name: 'COPY', uid: 1 },
  });
  assert.equal(dup.status, 409);
  const mirror = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: { clone_addr: `${source.url}/gitea_admin/pub.git`, repo_name: 'mirror', mirror: true, repo_owner: 'gitea_admin' },
  });
  assert.equal(mirror.status, 201, JSON.stringify(mirror.body));
  assert.equal(mirror.body.mirror, true);
  const badAuth = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: { clone_addr: `${source.url}/gitea_admin/priv.git`, auth_username: 'gitea_admin', auth_password: 'wrong', repo_name: 'nope', uid: 1 },
  });
  assert.equal(badAuth.status, 422);
  assert.match(badAuth.body.message, /Migration failed|Authentication failed/);
  const local = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: { clone_addr: join(source.stateDir, 'githost', 'repos', 'gitea_admin', 'pub.git'), repo_name: 'fromdisk', uid: 1 },
  });
  assert.equal(local.status, 201, JSON.stringify(local.body));
  const missing = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: { clone_addr: '/nonexistent/repo.git', repo_name: 'nope', uid: 1 },
  });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.message, 'Invalid local path, it does not exist or not a directory.');
});

test('redirects are not followed, so a public-looking source cannot bounce git to another host', async () => {
  const r = await api(open.url, 'POST', '/api/v1/repos/migrate', {
    token: open.adminToken,
    body: { clone_addr: `${redirectURL}/gitea_admin/pub.git`, repo_name: 'redirected', uid: 1 },
  });
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.match(r.body.message, /^Migration failed/);
  assert.equal((await api(open.url, 'GET', '/api/v1/repos/gitea_admin/redirected', { token: open.adminToken })).status, 404);
});

test("only admins migrate into another user's account; the address classifier covers the private ranges", async () => {
  const u = await api(source.url, 'POST', '/api/v1/admin/users', {
    token: source.adminToken,
    body: { username: 'dave', email: 'dave@example.com', password: 'dave-pass-1', must_change_password: false },
  });
  const r = await api(source.url, 'POST', '/api/v1/repos/migrate', {
    basic: ['dave', 'dave-pass-1'],
    body: { clone_addr: 'https://example.invalid/x.git', repo_name: 'x', uid: 1 },
  });
  assert.equal(u.status, 201);
  assert.equal(r.status, 403);
  for (const a of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.1.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::127.0.0.1',
    '2002:7f00:1::',
    '64:ff9b::a00:1',
  ]) {
    assert.equal(isNonPublicAddress(a), true, a);
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700::1111', '172.32.0.1']) assert.equal(isNonPublicAddress(a), false, a);
});
