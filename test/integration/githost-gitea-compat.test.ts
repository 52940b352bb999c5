// Gitea compatibility of githost beyond the GitOps setup calls, with real git and
// curl on loopback: a token in every form Gitea accepts (header "token"/"Bearer",
// basic with the token as the password under any name, basic with the token as the
// name and an empty or "x-oauth-basic" password), in the API and over git HTTP, with
// the token's scopes still bounding what it may do; migration with auth_token;
// repository listing and search with Gitea's paging headers; GPG key by id; token
// timestamps. The same requests against a real Gitea: test/gitea/differential.test.ts.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Gpg, api, ok, runAsync, startGithost, tempDir, toolEnv, type Started } from '../helpers/githost.js';

let gh: Started;
let other: Started;
let dir: string;
let env: NodeJS.ProcessEnv;
const tok: Record<string, string> = {};
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function as(header: string, method = 'GET', path = '/api/v1/user') {
  const res = await fetch(`${gh.url}${path}`, { method, headers: { Authorization: header } });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined, headers: res.headers };
}

before(async () => {
  gh = await startGithost();
  other = await startGithost({ allowLocalNetworks: true });
  dir = tempDir('gitea-compat');
  env = toolEnv(dir);
  for (const [name, mail] of [
    ['bob', 'bob@example.com'],
    ['carol', 'carol@example.com'],
  ]) {
    const u = await api(gh.url, 'POST', '/api/v1/admin/users', {
      token: gh.adminToken,
      body: { username: name, email: mail, password: `${name}-pass-12`, must_change_password: false },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
  }
  for (const [name, priv] of [
    ['secret', true],
    ['open', false],
    ['alpha', false],
  ] as const) {
    const r = await api(gh.url, 'POST', '/api/v1/user/repos', {
      basic: ['bob', 'bob-pass-12'],
      body: { name, private: priv, auto_init: true, description: `${name} repo` },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  const c = await api(gh.url, 'POST', '/api/v1/user/repos', { basic: ['carol', 'carol-pass-12'], body: { name: 'carols', private: true } });
  assert.equal(c.status, 201);
  const collab = await api(gh.url, 'PUT', '/api/v1/repos/carol/carols/collaborators/bob', { basic: ['carol', 'carol-pass-12'], body: { permission: 'read' } });
  assert.equal(collab.status, 204);
  for (const scopes of [['all'], ['read:user'], ['read:repository'], ['write:repository']]) {
    const t = await api(gh.url, 'POST', '/api/v1/users/bob/tokens', { basic: ['bob', 'bob-pass-12'], body: { name: scopes.join('+'), scopes } });
    assert.equal(t.status, 201, JSON.stringify(t.body));
    tok[scopes.join('+')] = t.body.sha1 as string;
  }
});

after(async () => {
  await gh?.close();
  await other?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the API accepts a token in every form Gitea does, always as its owner; wrong ones get 401', async () => {
  const t = tok['all'] as string;
  const forms = [
    `token ${t}`,
    `Bearer ${t}`,
    `Basic ${b64(`bob:${t}`)}`,
    `Basic ${b64(`gitea_admin:${t}`)}`,
    `Basic ${b64(`anyone-at-all:${t}`)}`,
    `Basic ${b64(`:${t}`)}`,
    `Basic ${b64(`${t}:`)}`,
    `Basic ${b64(`${t}:x-oauth-basic`)}`,
  ];
  for (const h of forms) {
    const r = await as(h);
    assert.equal(r.status, 200, `${h}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body?.['login'], 'bob', `${h} acts as the token's owner, not the name sent with it`);
  }
  const wrong = 'f'.repeat(40);
  for (const h of [
    `token ${wrong}`,
    `Basic ${b64(`bob:${wrong}`)}`,
    `Basic ${b64(`${wrong}:`)}`,
    `Basic ${b64(`${wrong}:x-oauth-basic`)}`,
    `Basic ${b64('bob:')}`,
    `Basic ${b64('bob:wrong-password')}`,
  ]) {
    assert.equal((await as(h)).status, 401, h);
  }
  // the password still works, and a token in basic auth cannot mint tokens (Gitea: password only)
  assert.equal((await as(`Basic ${b64('bob:bob-pass-12')}`)).status, 200);
  const mint = await as(`Basic ${b64(`bob:${t}`)}`, 'GET', '/api/v1/users/bob/tokens');
  assert.equal(mint.status, 401);
  // scopes hold whatever form carries the token
  for (const h of [`Basic ${b64(`gitea_admin:${tok['read:user'] as string}`)}`, `Basic ${b64(`${tok['read:user'] as string}:x-oauth-basic`)}`]) {
    assert.equal((await as(h, 'GET', '/api/v1/repos/bob/secret')).status, 403, h);
    assert.equal((await as(h, 'POST', '/api/v1/admin/users')).status, 403, `${h} is bob's token, not the admin's`);
  }
});

test('git over HTTP takes the token as the password under any name, or as the name; scopes still apply', async () => {
  const base = new URL(gh.url);
  const cloneURL = (user: string, pass: string, repo = 'secret') =>
    `${base.protocol}//${encodeURIComponent(user)}:${encodeURIComponent(pass)}@${base.host}/bob/${repo}.git`;
  const readTok = tok['read:repository'] as string;
  let n = 0;
  for (const [user, pass] of [
    ['bob', readTok],
    ['oauth2', readTok],
    ['someone', readTok],
    [readTok, 'x-oauth-basic'],
  ]) {
    const dest = join(dir, `clone-${n++}`);
    const r = await runAsync('git', ['clone', '-q', cloneURL(user as string, pass as string), dest], { env });
    assert.equal(r.status, 0, `${user}:${pass}: ${r.stderr}`);
    ok('git', ['rev-parse', 'HEAD'], { cwd: dest, env });
  }
  // the token as the name with an empty password, as curl or an extraHeader sends it
  const empty = await runAsync('git', ['-c', `http.extraHeader=Authorization: Basic ${b64(`${readTok}:`)}`, 'ls-remote', `${gh.url}/bob/secret.git`], { env });
  assert.equal(empty.status, 0, empty.stderr);
  assert.match(empty.stdout, /refs\/heads\/main/);
  // read:user cannot read the repository over git in any form; read:repository cannot push
  for (const [user, pass] of [
    ['gitea_admin', tok['read:user'] as string],
    [tok['read:user'] as string, 'x-oauth-basic'],
  ]) {
    const r = await runAsync('git', ['ls-remote', cloneURL(user as string, pass as string)], { env });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /403|Token scope/);
  }
  const work = join(dir, 'clone-0');
  ok('git', ['-c', 'user.name=b', '-c', 'user.email=bob@example.com', 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: work, env });
  const push = await runAsync('git', ['push', '-q', cloneURL('someone', readTok), 'HEAD:main'], { cwd: work, env });
  assert.notEqual(push.status, 0);
  assert.match(push.stderr, /403|Token scope/);
  const pushOk = await runAsync('git', ['push', '-q', cloneURL('oauth2', tok['write:repository'] as string), 'HEAD:main'], { cwd: work, env });
  assert.equal(pushOk.status, 0, pushOk.stderr);
});

test('migration with service gitea and auth_token clones a private source with the token', async () => {
  const r = await api(other.url, 'POST', '/api/v1/repos/migrate', {
    token: other.adminToken,
    body: { clone_addr: `${gh.url}/bob/secret.git`, service: 'gitea', auth_token: tok['read:repository'], repo_name: 'copy', private: true },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.empty, false);
  assert.equal(r.body.branch_count, 1);
  const refused = await api(other.url, 'POST', '/api/v1/repos/migrate', {
    token: other.adminToken,
    body: { clone_addr: `${gh.url}/bob/secret.git`, service: 'gitea', auth_token: tok['read:user'], repo_name: 'copy2' },
  });
  assert.equal(refused.status, 422, 'a token without read:repository cannot be used to migrate');
});

test('tokens carry created_at and last_used_at; last_used_at moves when the token is used', async () => {
  const list = async () => (await api(gh.url, 'GET', '/api/v1/users/bob/tokens', { basic: ['bob', 'bob-pass-12'] })).body as Record<string, string>[];
  const before = (await list()).find((t) => t['name'] === 'read:user');
  assert.ok(before);
  assert.match(before['created_at'] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.match(before['last_used_at'] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(before['sha1'], '');
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await as(`Basic ${b64(`x:${tok['read:user'] as string}`)}`)).status, 200);
  const afterUse = (await list()).find((t) => t['name'] === 'read:user');
  assert.ok(Date.parse(afterUse?.['last_used_at'] as string) > Date.parse(before['last_used_at'] as string), JSON.stringify(afterUse));
  assert.equal(afterUse?.['created_at'], before['created_at']);
});

test('repository listing and search: who sees what, {ok, data}, X-Total-Count and Link as Gitea sends them', async () => {
  const mine = await api(gh.url, 'GET', '/api/v1/user/repos', { basic: ['bob', 'bob-pass-12'] });
  assert.equal(mine.status, 200);
  assert.deepEqual(
    mine.body.map((r: { full_name: string }) => r.full_name),
    ['bob/alpha', 'carol/carols', 'bob/open', 'bob/secret'],
  );
  assert.equal(mine.headers.get('x-total-count'), '4');
  assert.equal((await api(gh.url, 'GET', '/api/v1/user/repos')).status, 401);
  assert.equal((await api(gh.url, 'GET', '/api/v1/user/repos', { token: tok['read:user'] })).status, 403);

  const anon = await api(gh.url, 'GET', '/api/v1/users/bob/repos');
  assert.deepEqual(anon.body.map((r: { name: string }) => r.name).sort(), ['alpha', 'open']);
  const carolSees = await api(gh.url, 'GET', '/api/v1/users/bob/repos', { basic: ['carol', 'carol-pass-12'] });
  assert.deepEqual(carolSees.body.map((r: { name: string }) => r.name).sort(), ['alpha', 'open']);
  const bobSees = await api(gh.url, 'GET', '/api/v1/users/bob/repos', { token: tok['read:repository'] });
  assert.deepEqual(bobSees.body.map((r: { name: string }) => r.name).sort(), ['alpha', 'open', 'secret']);
  assert.equal((await api(gh.url, 'GET', '/api/v1/users/nobody/repos')).status, 404);

  // bob sees his three and carol's private one (collaborator), by name
  const s = await api(gh.url, 'GET', '/api/v1/repos/search?sort=alpha&limit=1&page=2', { token: tok['read:repository'] });
  assert.equal(s.status, 200);
  assert.equal(s.body.ok, true);
  assert.deepEqual(
    s.body.data.map((r: { full_name: string }) => r.full_name),
    ['bob/open'],
  );
  assert.equal(s.headers.get('x-total-count'), '4');
  assert.equal(
    s.headers.get('link'),
    [
      `<${gh.url}/api/v1/repos/search?limit=1&page=3&sort=alpha>; rel="next"`,
      `<${gh.url}/api/v1/repos/search?limit=1&page=4&sort=alpha>; rel="last"`,
      `<${gh.url}/api/v1/repos/search?limit=1&page=1&sort=alpha>; rel="first"`,
      `<${gh.url}/api/v1/repos/search?limit=1&page=1&sort=alpha>; rel="prev"`,
    ].join(','),
  );
  const all = await api(gh.url, 'GET', '/api/v1/repos/search?q=e', { token: tok['read:repository'] });
  assert.deepEqual(
    all.body.data.map((r: { full_name: string }) => r.full_name),
    ['bob/open', 'bob/secret'],
  );
  assert.equal(all.headers.get('link'), null);
  const anonSearch = await api(gh.url, 'GET', '/api/v1/repos/search');
  assert.deepEqual(
    anonSearch.body.data.map((r: { full_name: string }) => r.full_name),
    ['bob/alpha', 'bob/open'],
  );
  const desc = await api(gh.url, 'GET', '/api/v1/repos/search?q=secret%20repo&includeDesc=true', { basic: ['bob', 'bob-pass-12'] });
  assert.deepEqual(
    desc.body.data.map((r: { name: string }) => r.name),
    ['secret'],
  );
  const byUid = await api(gh.url, 'GET', `/api/v1/repos/search?uid=${String(mine.body[0].owner.id)}&exclusive=true&sort=alpha&order=desc`, {
    basic: ['bob', 'bob-pass-12'],
  });
  assert.deepEqual(
    byUid.body.data.map((r: { name: string }) => r.name),
    ['secret', 'open', 'alpha'],
  );
  const bad = await api(gh.url, 'GET', '/api/v1/repos/search?mode=nonsense');
  assert.equal(bad.status, 422);
  assert.equal(bad.body.message, 'Invalid search mode: "nonsense"');
  assert.equal((await api(gh.url, 'GET', '/api/v1/repos/search?sort=nope')).status, 422);
  // the repository fields the Gitea SDK reads
  for (const k of [
    'branch_count',
    'has_code',
    'projects_mode',
    'default_merge_style',
    'allow_manual_merge',
    'mirror_updated',
    'topics',
    'licenses',
    'avatar_url',
  ]) {
    assert.ok(k in (all.body.data[0] as Record<string, unknown>), k);
  }
});

test("GPG key by id: read your own, 404 for others' and unknown ids, delete is 204 (also when absent)", async () => {
  const gpg = new Gpg(join(dir, 'gpg'));
  try {
    const keyID = gpg.newKey('Bob', 'bob@example.com');
    const add = await api(gh.url, 'POST', '/api/v1/user/gpg_keys', { basic: ['bob', 'bob-pass-12'], body: { armored_public_key: gpg.armor(keyID) } });
    assert.equal(add.status, 201, JSON.stringify(add.body));
    const id = add.body.id as number;
    const got = await api(gh.url, 'GET', `/api/v1/user/gpg_keys/${id}`, { token: tok['read:user'] });
    assert.equal(got.status, 200);
    assert.equal(got.body.key_id, keyID);
    assert.equal((await api(gh.url, 'GET', `/api/v1/user/gpg_keys/${id}`, { basic: ['carol', 'carol-pass-12'] })).status, 404);
    assert.equal((await api(gh.url, 'GET', '/api/v1/user/gpg_keys/999999', { token: tok['read:user'] })).status, 404);
    assert.equal((await api(gh.url, 'GET', '/api/v1/user/gpg_keys/abc', { token: tok['read:user'] })).status, 404);
    assert.equal((await api(gh.url, 'DELETE', `/api/v1/user/gpg_keys/${id}`, { token: tok['read:user'] })).status, 403);
    assert.equal((await api(gh.url, 'DELETE', `/api/v1/user/gpg_keys/${id}`, { basic: ['carol', 'carol-pass-12'] })).status, 204);
    assert.equal((await api(gh.url, 'GET', `/api/v1/user/gpg_keys/${id}`, { token: tok['read:user'] })).status, 200, "carol cannot delete bob's key");
    assert.equal((await api(gh.url, 'DELETE', `/api/v1/user/gpg_keys/${id}`, { token: tok['all'] })).status, 204);
    assert.equal((await api(gh.url, 'GET', `/api/v1/user/gpg_keys/${id}`, { token: tok['read:user'] })).status, 404);
    assert.deepEqual((await api(gh.url, 'GET', '/api/v1/user/gpg_keys', { token: tok['read:user'] })).body, []);
    assert.equal((await api(gh.url, 'DELETE', `/api/v1/user/gpg_keys/${id}`, { token: tok['all'] })).status, 204);
  } finally {
    gpg.close();
  }
});
