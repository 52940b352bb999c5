// Bad input to the code-hosting server (docs/githost.md). Each gets Gitea's status code and a
// clear message, nothing is written, and the server keeps serving.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { GithostDb } from '../../src/githost/server/index.js';
import { api, startGithost, type Started } from '../helpers/githost.js';

let gh: Started;
before(async () => {
  gh = await startGithost({ maxBodyBytes: 64 * 1024 });
});
after(async () => {
  await gh.close();
});

/** A raw request (paths that fetch would normalise, bodies of any shape). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const u = new URL(gh.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const user = (over: Record<string, unknown>) => ({ username: 'eve', email: 'eve@example.com', password: 'eve-pass-12', must_change_password: false, ...over });

test('bad input table: Gitea status codes and messages, no half-written state, the server keeps serving', async () => {
  const tok = { Authorization: `token ${gh.adminToken}`, 'Content-Type': 'application/json' };
  const cases: { name: string; method: string; path: string; headers?: Record<string, string>; body?: string | Buffer; status: number; message?: RegExp }[] = [
    {
      name: 'malformed JSON',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: '{"username": "eve",',
      status: 422,
      message: /DeserializationError/,
    },
    { name: 'JSON array instead of object', method: 'POST', path: '/api/v1/admin/users', headers: tok, body: '[1,2]', status: 422 },
    { name: 'JSON null', method: 'POST', path: '/api/v1/admin/users', headers: tok, body: 'null', status: 422 },
    {
      name: 'missing username',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: undefined })),
      status: 422,
      message: /\[Username\]: Required/,
    },
    {
      name: 'missing e-mail',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ email: undefined })),
      status: 422,
      message: /\[Email\]: Required/,
    },
    {
      name: 'username is a number',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: 5 })),
      status: 422,
      message: /must be a string/,
    },
    {
      name: 'boolean is a string',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ must_change_password: 'no' })),
      status: 422,
      message: /must be a boolean/,
    },
    {
      name: 'uid is a string',
      method: 'POST',
      path: '/api/v1/repos/migrate',
      headers: tok,
      body: JSON.stringify({ clone_addr: 'https://example.invalid/x', repo_name: 'x', uid: '1' }),
      status: 422,
      message: /must be an integer/,
    },
    {
      name: 'huge body',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ full_name: 'x'.repeat(200_000) })),
      status: 413,
    },
    {
      name: 'huge body, chunked',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: { ...tok, 'Transfer-Encoding': 'chunked' },
      body: Buffer.alloc(300_000, 32),
      status: 413,
    },
    {
      name: 'username with ../',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: '../etc' })),
      status: 422,
      message: /user name is invalid/,
    },
    {
      name: 'username with slash',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: 'a/../../b' })),
      status: 422,
    },
    {
      name: 'absolute path as username',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: '/tmp/x' })),
      status: 422,
    },
    {
      name: 'control character in username',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: 'eve\u0000x' })),
      status: 422,
    },
    {
      name: 'newline in username',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: 'eve\nroot' })),
      status: 422,
    },
    {
      name: 'reserved username',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ username: 'api' })),
      status: 422,
      message: /reserved/,
    },
    {
      name: 'control character in e-mail',
      method: 'POST',
      path: '/api/v1/admin/users',
      headers: tok,
      body: JSON.stringify(user({ email: 'eve@exa\rmple.com' })),
      status: 422,
      message: /e-mail invalid/,
    },
    {
      name: 'repo name ../',
      method: 'POST',
      path: '/api/v1/user/repos',
      headers: tok,
      body: JSON.stringify({ name: '../../escape' }),
      status: 422,
      message: /repository name is invalid/,
    },
    { name: 'repo name ..', method: 'POST', path: '/api/v1/user/repos', headers: tok, body: JSON.stringify({ name: '..' }), status: 422, message: /reserved/ },
    { name: 'repo name absolute', method: 'POST', path: '/api/v1/user/repos', headers: tok, body: JSON.stringify({ name: '/etc/passwd' }), status: 422 },
    {
      name: 'repo name ending .git',
      method: 'POST',
      path: '/api/v1/user/repos',
      headers: tok,
      body: JSON.stringify({ name: 'x.git' }),
      status: 422,
      message: /pattern/,
    },
    { name: 'repo name with control char', method: 'POST', path: '/api/v1/user/repos', headers: tok, body: JSON.stringify({ name: 'a\tb' }), status: 422 },
    {
      name: 'default branch with ..',
      method: 'POST',
      path: '/api/v1/user/repos',
      headers: tok,
      body: JSON.stringify({ name: 'ok', default_branch: 'a/../b' }),
      status: 422,
    },
    {
      name: 'default branch option-like',
      method: 'POST',
      path: '/api/v1/user/repos',
      headers: tok,
      body: JSON.stringify({ name: 'ok', default_branch: '-x' }),
      status: 422,
    },
    {
      name: 'migrate repo_name traversal',
      method: 'POST',
      path: '/api/v1/repos/migrate',
      headers: tok,
      body: JSON.stringify({ clone_addr: 'https://example.invalid/x', repo_name: '../x', uid: 1 }),
      status: 422,
    },
    {
      name: 'migrate clone_addr with control chars',
      method: 'POST',
      path: '/api/v1/repos/migrate',
      headers: tok,
      body: JSON.stringify({ clone_addr: 'https://exa\nmple.com/x', repo_name: 'x', uid: 1 }),
      status: 422,
    },
    {
      name: 'migrate clone_addr option injection',
      method: 'POST',
      path: '/api/v1/repos/migrate',
      headers: tok,
      body: JSON.stringify({ clone_addr: '--upload-pack=touch /tmp/x', repo_name: 'x', uid: 1 }),
      status: 422,
    },
    { name: 'encoded traversal in user path', method: 'GET', path: '/api/v1/users/..%2F..%2Fetc', headers: tok, status: 404 },
    { name: 'bad percent-encoding', method: 'GET', path: '/api/v1/users/%E0%A4%A', headers: tok, status: 400 },
    { name: 'commit rev with ..', method: 'GET', path: '/api/v1/repos/gitea_admin/x/git/commits/HEAD..HEAD', headers: tok, status: 404 },
    { name: 'commit rev option', method: 'GET', path: '/api/v1/repos/gitea_admin/x/git/commits/--output=x', headers: tok, status: 404 },
    { name: 'git path traversal', method: 'GET', path: '/gitea_admin/..%2F..%2Fx.git/info/refs?service=git-upload-pack', status: 404 },
    { name: 'git raw traversal', method: 'GET', path: '/../../etc/passwd', status: 404 },
    { name: 'git dot-dot repo', method: 'GET', path: '/gitea_admin/...git/info/refs?service=git-upload-pack', status: 404 },
    { name: 'basic auth not base64 of user:pass', method: 'GET', path: '/api/v1/user', headers: { Authorization: 'Basic !!!!' }, status: 401 },
    { name: 'unknown auth scheme', method: 'GET', path: '/api/v1/user', headers: { Authorization: 'Digest abc' }, status: 401 },
    { name: 'token of wrong shape', method: 'GET', path: '/api/v1/user', headers: { Authorization: 'token ../../etc' }, status: 401 },
    { name: 'unknown token', method: 'GET', path: '/api/v1/user', headers: { Authorization: `token ${'a'.repeat(40)}` }, status: 401 },
    {
      name: 'wrong password',
      method: 'GET',
      path: '/api/v1/user',
      headers: { Authorization: `Basic ${Buffer.from('gitea_admin:nope-nope').toString('base64')}` },
      status: 401,
    },
    {
      name: 'unknown user',
      method: 'GET',
      path: '/api/v1/user',
      headers: { Authorization: `Basic ${Buffer.from('ghost1:nope-nope').toString('base64')}` },
      status: 401,
    },
    { name: 'unknown route', method: 'GET', path: '/api/v1/nothing/here', status: 404 },
    { name: 'wrong method', method: 'DELETE', path: '/api/v1/admin/users', headers: tok, status: 405 },
  ];
  for (const c of cases) {
    const r = await raw(c.method, c.path, c.headers ?? {}, c.body);
    assert.equal(r.status, c.status, `${c.name}: ${r.text}`);
    if (c.path.startsWith('/api/v1')) {
      const body = JSON.parse(r.text);
      assert.deepEqual(Object.keys(body).sort(), ['message', 'url'], c.name);
      assert.ok(body.message.length > 0, c.name);
      if (c.message) assert.match(body.message, c.message, c.name);
    }
  }
  // nothing half-written: only the seeded admin, no repositories, nothing under repos/ or tmp/
  const db = new GithostDb(join(gh.stateDir, 'githost', 'githost.db'));
  try {
    assert.equal(db.userCount(), 1);
    assert.equal(db.allRepos().length, 0);
  } finally {
    db.close();
  }
  assert.deepEqual(readdirSync(join(gh.stateDir, 'githost', 'repos')), []);
  assert.deepEqual(readdirSync(join(gh.stateDir, 'githost', 'tmp')), []);
  const alive = await api(gh.url, 'GET', '/api/v1/version');
  assert.equal(alive.status, 200);
  assert.match(alive.body.version, /\+strait$/);
});

test('fuzz: 600 random paths, headers and bodies never get a 5xx and never stop the server', async () => {
  let s = 0x5eed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32;
  };
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const pieces = [
    'api',
    'v1',
    'users',
    'user',
    'admin',
    'repos',
    'migrate',
    'tokens',
    'gpg_keys',
    'git',
    'commits',
    'collaborators',
    'gitea_admin',
    '..',
    '.',
    '%2e%2e',
    '%00',
    '%ff',
    'a'.repeat(300),
    'info',
    'refs',
    'x.git',
    'HEAD',
    '-',
    '~',
    '%',
    '',
  ];
  const bodies = [
    '',
    '{',
    '{}',
    '[]',
    'null',
    '"x"',
    '{"name":null}',
    '{"username":{"$gt":""}}',
    '{"clone_addr":"file:///etc"}',
    '{"armored_public_key":"-----BEGIN PGP PUBLIC KEY BLOCK-----\\n\\n=AAAA\\n-----END PGP PUBLIC KEY BLOCK-----"}',
    '\u0000\u0001',
    '{"a":1e999}',
  ];
  for (let i = 0; i < 600; i++) {
    const path = `/${Array.from({ length: 1 + Math.floor(rnd() * 7) }, () => pick(pieces)).join('/')}${rnd() < 0.2 ? '?service=git-receive-pack' : ''}`;
    const method = pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    const auth = pick(['', `token ${gh.adminToken}`, 'token x', 'Basic Og==', `Basic ${Buffer.from('gitea_admin:admin-pass-1').toString('base64')}`]);
    if (auth) headers['Authorization'] = auth;
    const body = method === 'GET' ? undefined : pick(bodies);
    const r = await raw(method, path, headers, body).catch((e: Error) => {
      throw new Error(`${method} ${path} ${JSON.stringify(headers)} ${JSON.stringify(body)}: ${e.message}`);
    });
    assert.ok(r.status >= 200 && r.status < 500, `${method} ${path} -> ${r.status} ${r.text.slice(0, 200)}`);
  }
  assert.equal((await api(gh.url, 'GET', '/api/v1/version')).status, 200);
});
