// The four code-hosting calls of the GitOps setup (docs/githost.md, API), made with real curl
// as Gitea's clients make them, and the Gitea behaviour around them (status codes, hidden fields).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { api, startGithost, type JsonBody, type Started } from '../helpers/githost.js';

let gh: Started;
// allowLocalNetworks: the migration source in these tests is this same server on loopback
before(async () => {
  gh = await startGithost({ allowLocalNetworks: true });
});
after(async () => {
  await gh.close();
});

// curl runs asynchronously: the server lives in this process's event loop
async function curl(...args: string[]): Promise<{ status: number; body: JsonBody }> {
  const r = await promisify(execFile)('curl', ['-sS', '--max-time', '20', '-w', '\n%{http_code}', ...args], { encoding: 'utf8' });
  const nl = r.stdout.lastIndexOf('\n');
  const text = r.stdout.slice(0, nl);
  return { status: Number(r.stdout.slice(nl + 1)), body: text ? JSON.parse(text) : undefined };
}

test('the setup calls with curl: token by basic auth, create user, read user, migrate', async () => {
  // 1. POST /api/v1/users/<username>/tokens with basic auth and {"name"}
  const tok = await curl(
    '-X',
    'POST',
    '-H',
    'Content-Type: application/json',
    '-d',
    '{"name":"spec-token"}',
    '-u',
    'gitea_admin:admin-pass-1',
    `${gh.url}/api/v1/users/gitea_admin/tokens`,
  );
  assert.equal(tok.status, 201);
  assert.match(tok.body.sha1, /^[0-9a-f]{40}$/);
  assert.equal(tok.body.name, 'spec-token');
  assert.equal(tok.body.token_last_eight, tok.body.sha1.slice(-8));
  const token = tok.body.sha1 as string;

  // 2. POST /api/v1/admin/users with the admin's token
  const created = await curl(
    '-X',
    'POST',
    `${gh.url}/api/v1/admin/users`,
    '-H',
    'accept: application/json',
    '-H',
    `Authorization: token ${token}`,
    '-H',
    'Content-Type: application/json',
    '-d',
    JSON.stringify({
      email: 'alice@example.com',
      login_name: 'alice',
      must_change_password: false,
      password: 'alice-pass-1',
      send_notify: false,
      username: 'alice',
    }),
  );
  assert.equal(created.status, 201);
  assert.equal(created.body.login, 'alice');
  assert.equal(created.body.email, 'alice@example.com');

  // 3. GET /api/v1/users/<username>
  const user = await curl('-X', 'GET', `${gh.url}/api/v1/users/alice`, '-H', 'accept: application/json', '-H', `Authorization: token ${token}`);
  assert.equal(user.status, 200);
  assert.equal(typeof user.body.id, 'number');
  assert.ok(Number.isInteger(user.body.id));
  assert.equal(user.body.id, created.body.id);

  // 4. POST /api/v1/repos/migrate (source: a repository of this server, on loopback)
  const src = await api(gh.url, 'POST', '/api/v1/user/repos', { token, body: { name: 'upstream', auto_init: true } });
  assert.equal(src.status, 201);
  const mig = await curl(
    '-X',
    'POST',
    `${gh.url}/api/v1/repos/migrate`,
    '-H',
    'accept: application/json',
    '-H',
    `Authorization: token ${token}`,
    '-H',
    'Content-Type: application/json',
    '-d',
    JSON.stringify({
      clone_addr: `${gh.url}/gitea_admin/upstream.git`,
      description: 'migrated',
      issues: false,
      milestones: false,
      mirror: false,
      private: false,
      repo_name: 'copy',
      uid: user.body.id,
    }),
  );
  assert.equal(mig.status, 201, JSON.stringify(mig.body));
  assert.equal(mig.body.full_name, 'alice/copy');
  assert.equal(mig.body.owner.id, user.body.id);
  assert.equal(mig.body.description, 'migrated');
  assert.equal(mig.body.empty, false);
  assert.equal(mig.body.clone_url, `${gh.url}/alice/copy.git`);
  const again = await curl(
    '-X',
    'POST',
    `${gh.url}/api/v1/repos/migrate`,
    '-H',
    `Authorization: token ${token}`,
    '-H',
    'Content-Type: application/json',
    '-d',
    JSON.stringify({ clone_addr: `${gh.url}/gitea_admin/upstream.git`, repo_name: 'copy', uid: user.body.id }),
  );
  assert.equal(again.status, 409);
  assert.deepEqual(Object.keys(again.body).sort(), ['message', 'url']);
  assert.equal(again.body.url, `${gh.url}/api/swagger`);
});

test('token creation takes basic auth only, for yourself unless admin; names are unique; unknown scopes 400', async () => {
  await api(gh.url, 'POST', '/api/v1/admin/users', {
    token: gh.adminToken,
    body: { username: 'bob', email: 'bob@example.com', password: 'bob-pass-12', must_change_password: false },
  });
  const cases: { name: string; opts: Parameters<typeof api>[3]; user: string; status: number; message?: RegExp }[] = [
    {
      name: 'token auth is not allowed',
      opts: { token: gh.adminToken, body: { name: 'x' } },
      user: 'gitea_admin',
      status: 401,
      message: /auth method not allowed|auth required/,
    },
    { name: 'no auth', opts: { body: { name: 'x' } }, user: 'bob', status: 401 },
    { name: 'wrong password', opts: { basic: ['bob', 'wrong-pass'], body: { name: 'x' } }, user: 'bob', status: 401, message: /password is invalid/ },
    { name: 'someone else', opts: { basic: ['bob', 'bob-pass-12'], body: { name: 'x' } }, user: 'gitea_admin', status: 403 },
    { name: 'missing name', opts: { basic: ['bob', 'bob-pass-12'], body: {} }, user: 'bob', status: 422, message: /\[Name\]: Required/ },
    {
      name: 'unknown scope',
      opts: { basic: ['bob', 'bob-pass-12'], body: { name: 'x', scopes: ['write:everything'] } },
      user: 'bob',
      status: 400,
      message: /scope/,
    },
    { name: 'own token', opts: { basic: ['bob', 'bob-pass-12'], body: { name: 'x', scopes: ['read:user'] } }, user: 'bob', status: 201 },
    { name: 'duplicate name', opts: { basic: ['bob', 'bob-pass-12'], body: { name: 'x' } }, user: 'bob', status: 400, message: /has been used already/ },
    { name: 'admin for another user', opts: { basic: ['gitea_admin', 'admin-pass-1'], body: { name: 'by-admin' } }, user: 'bob', status: 201 },
    { name: 'unknown user', opts: { basic: ['gitea_admin', 'admin-pass-1'], body: { name: 'y' } }, user: 'nobody', status: 404 },
  ];
  for (const c of cases) {
    const r = await api(gh.url, 'POST', `/api/v1/users/${c.user}/tokens`, c.opts);
    assert.equal(r.status, c.status, `${c.name}: ${JSON.stringify(r.body)}`);
    if (c.message) assert.match(r.body.message, c.message, c.name);
    if (r.status >= 400) assert.equal(typeof r.body.url, 'string', c.name);
    if (r.status === 401) assert.match(r.headers.get('www-authenticate') ?? '', /^Basic realm=/, c.name);
  }
});

test('admin user creation: 401 without token, 403 for non-admins and narrow scopes, 422 duplicates and bad e-mail, 400 short password', async () => {
  const bobTok = (await api(gh.url, 'POST', '/api/v1/users/bob/tokens', { basic: ['bob', 'bob-pass-12'], body: { name: 'bob-all' } })).body.sha1 as string;
  const readOnly = (
    await api(gh.url, 'POST', '/api/v1/users/gitea_admin/tokens', { basic: ['gitea_admin', 'admin-pass-1'], body: { name: 'ro', scopes: ['read:admin'] } })
  ).body.sha1 as string;
  const u = (name: string, email: string, password = 'long-enough-1') => ({
    username: name,
    email,
    password,
    login_name: name,
    must_change_password: false,
    send_notify: false,
  });
  const cases: { name: string; token?: string; body: unknown; status: number; message?: RegExp }[] = [
    { name: 'no token', body: u('carol', 'carol@example.com'), status: 401, message: /token is required/ },
    { name: 'not an admin', token: bobTok, body: u('carol', 'carol@example.com'), status: 403, message: /site admin/ },
    { name: 'token without write:admin', token: readOnly, body: u('carol', 'carol@example.com'), status: 403, message: /write:admin/ },
    { name: 'duplicate user', token: gh.adminToken, body: u('bob', 'other@example.com'), status: 422, message: /user already exists/ },
    { name: 'duplicate user, other case', token: gh.adminToken, body: u('BOB', 'other@example.com'), status: 422, message: /user already exists/ },
    { name: 'duplicate e-mail', token: gh.adminToken, body: u('carol', 'BOB@example.com'), status: 422, message: /e-mail already in use/ },
    { name: 'invalid e-mail', token: gh.adminToken, body: u('carol', 'not-an-email'), status: 422, message: /e-mail invalid/ },
    { name: 'short password', token: gh.adminToken, body: u('carol', 'carol@example.com', 'short'), status: 400, message: /at least 8/ },
    { name: 'ok', token: gh.adminToken, body: u('carol', 'carol@example.com'), status: 201 },
  ];
  for (const c of cases) {
    const r = await api(gh.url, 'POST', '/api/v1/admin/users', { token: c.token, body: c.body });
    assert.equal(r.status, c.status, `${c.name}: ${JSON.stringify(r.body)}`);
    if (c.message) assert.match(r.body.message, c.message, c.name);
  }
});

test('GET user hides e-mail from anonymous callers and admin fields from non-admins; 404 for unknown users', async () => {
  const bobTok = (await api(gh.url, 'POST', '/api/v1/users/bob/tokens', { basic: ['bob', 'bob-pass-12'], body: { name: 'bob-read' } })).body.sha1 as string;
  const anon = await api(gh.url, 'GET', '/api/v1/users/gitea_admin');
  assert.equal(anon.status, 200);
  assert.match(anon.body.email, /@noreply\./);
  assert.equal(anon.body.is_admin, false);
  const asBob = await api(gh.url, 'GET', '/api/v1/users/gitea_admin', { token: bobTok });
  assert.equal(asBob.body.email, 'admin@example.com');
  assert.equal(asBob.body.is_admin, false, 'is_admin shown only to admins and the user');
  assert.equal(asBob.body.login_name, '');
  const asAdmin = await api(gh.url, 'GET', '/api/v1/users/gitea_admin', { token: gh.adminToken });
  assert.equal(asAdmin.body.is_admin, true);
  const missing = await api(gh.url, 'GET', '/api/v1/users/nobody', { token: gh.adminToken });
  assert.equal(missing.status, 404);
  assert.deepEqual(Object.keys(missing.body).sort(), ['message', 'url']);
  const wrongToken = await api(gh.url, 'GET', '/api/v1/users/bob', { token: 'f'.repeat(40) });
  assert.equal(wrongToken.status, 401);
});

test('repositories: create, read, 409 on duplicates, collaborators, private repos hidden', async () => {
  const bobTok = (await api(gh.url, 'POST', '/api/v1/users/bob/tokens', { basic: ['bob', 'bob-pass-12'], body: { name: 'bob-repo' } })).body.sha1 as string;
  const made = await api(gh.url, 'POST', '/api/v1/user/repos', { token: gh.adminToken, body: { name: 'Secret', private: true, description: 'd' } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(made.body.full_name, 'gitea_admin/Secret');
  assert.equal(made.body.clone_url, `${gh.url}/gitea_admin/Secret.git`);
  assert.equal(made.body.empty, true);
  assert.equal(made.body.private, true);
  assert.deepEqual(made.body.permissions, { admin: true, push: true, pull: true });
  const dup = await api(gh.url, 'POST', '/api/v1/user/repos', { token: gh.adminToken, body: { name: 'secret' } });
  assert.equal(dup.status, 409);
  assert.equal((await api(gh.url, 'GET', '/api/v1/repos/gitea_admin/secret', { token: bobTok })).status, 404, 'private repo hidden from bob');
  const collab = await api(gh.url, 'PUT', '/api/v1/repos/gitea_admin/secret/collaborators/bob', { token: gh.adminToken, body: { permission: 'read' } });
  assert.equal(collab.status, 204);
  const seen = await api(gh.url, 'GET', '/api/v1/repos/gitea_admin/secret', { token: bobTok });
  assert.equal(seen.status, 200);
  assert.deepEqual(seen.body.permissions, { admin: false, push: false, pull: true });
  const init = await api(gh.url, 'POST', '/api/v1/user/repos', {
    token: gh.adminToken,
    body: { name: 'inited', auto_init: true, default_branch: 'trunk', description: 'hello' },
  });
  assert.equal(init.status, 201);
  assert.equal(init.body.empty, false);
  assert.equal(init.body.default_branch, 'trunk');
  const head = await api(gh.url, 'GET', '/api/v1/repos/gitea_admin/inited/git/commits/HEAD', {});
  assert.equal(head.body.commit.message, 'Initial commit\n');
  assert.equal(head.body.commit.author.email, 'admin@example.com');
  const notAdmin = await api(gh.url, 'PUT', '/api/v1/repos/gitea_admin/secret/collaborators/carol', { token: bobTok, body: {} });
  assert.equal(notAdmin.status, 403);
});
