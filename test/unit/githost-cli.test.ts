// githost (docs/githost.md): `strait admin user create` (the only way to make the first admin) and
// `strait githost serve` flags.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { GithostDb } from '../../src/githost/server/index.js';
import { tempDir } from '../helpers/githost.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const strait = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8' });

test("admin user create prints Gitea's line and the token on its own line; the user is an admin with a hashed password", () => {
  const dir = tempDir('githost-cli');
  try {
    const r = strait(
      'admin',
      'user',
      'create',
      '--username',
      'gitea_admin',
      '--password',
      'secret-pass-1',
      '--email',
      'admin@example.com',
      '--admin',
      '--access-token',
      '--state-dir',
      dir,
    );
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], "New user 'gitea_admin' has been successfully created!");
    assert.match(lines[1] ?? '', /^[0-9a-f]{40}$/);
    assert.equal(lines.length, 2);
    const plain = strait('admin', 'user', 'create', '--username', 'second', '--password', 'secret-pass-2', '--email', 'second@example.com', '--state-dir', dir);
    assert.equal(plain.stdout, "New user 'second' has been successfully created!\n");
    const json = strait(
      'admin',
      'user',
      'create',
      '--username',
      'third',
      '--password',
      'secret-pass-3',
      '--email',
      'third@example.com',
      '--must-change-password',
      '--access-token',
      '--state-dir',
      dir,
      '-o',
      'json',
    );
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout)).sort(), ['admin', 'email', 'id', 'token', 'username']);

    const db = new GithostDb(join(dir, 'githost', 'githost.db'));
    try {
      const u = db.userByName('gitea_admin');
      assert.equal(u?.is_admin, 1);
      assert.equal(u?.passwd_algo, 'pbkdf2$50000$50');
      assert.ok(!JSON.stringify(u).includes('secret-pass-1'), 'no clear-text password stored');
      const tokens = db.tokensOf(u?.id ?? 0);
      assert.equal(tokens[0]?.token_last_eight, lines[1]?.slice(-8));
      assert.ok(!JSON.stringify(tokens).includes(lines[1] ?? 'x'), 'only a hash of the token is stored');
      assert.equal(db.userByName('third')?.must_change_password, 1);
    } finally {
      db.close();
    }

    const cases: { name: string; args: string[]; exit: number; code: string }[] = [
      {
        name: 'duplicate user',
        args: ['--username', 'gitea_admin', '--password', 'secret-pass-1', '--email', 'x@example.com'],
        exit: 4,
        code: 'STRAIT_ERR_GITHOST_USER_EXISTS',
      },
      {
        name: 'duplicate e-mail',
        args: ['--username', 'other', '--password', 'secret-pass-1', '--email', 'ADMIN@example.com'],
        exit: 4,
        code: 'STRAIT_ERR_GITHOST_EMAIL_USED',
      },
      {
        name: 'short password',
        args: ['--username', 'other', '--password', 'short', '--email', 'o@example.com'],
        exit: 2,
        code: 'STRAIT_ERR_GITHOST_PASSWORD_TOO_SHORT',
      },
      {
        name: 'traversal name',
        args: ['--username', '../x', '--password', 'secret-pass-1', '--email', 'o@example.com'],
        exit: 2,
        code: 'STRAIT_ERR_GITHOST_NAME_INVALID',
      },
      { name: 'missing e-mail', args: ['--username', 'other', '--password', 'secret-pass-1'], exit: 2, code: 'STRAIT_ERR_USAGE' },
    ];
    for (const c of cases) {
      const e = strait('admin', 'user', 'create', ...c.args, '--state-dir', dir);
      assert.equal(e.status, c.exit, `${c.name}: ${e.stderr}`);
      assert.match(e.stderr, new RegExp(`^error ${c.code}: `), c.name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('githost serve --help shows its flags; a bad config file is refused before listening', () => {
  const help = strait('githost', 'serve', '--help');
  assert.equal(help.status, 0);
  for (const flag of ['--port', '--host', '--state-dir', '--config']) assert.match(help.stdout, new RegExp(flag));
  const dir = tempDir('githost-cli');
  try {
    const cfg = join(dir, 'bad.yaml');
    spawnSync('sh', ['-c', `printf 'allowLocalNetwork: true\\n' > ${cfg}`]);
    const r = strait('githost', 'serve', '--port', '0', '--state-dir', dir, '--config', cfg);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /STRAIT_ERR_CONFIG_RENAMED_KEY.*allowLocalNetworks/);
    const hook = join(dir, 'hook.yaml');
    spawnSync('sh', ['-c', `printf 'pushWebhooks: ["http://10.0.0.1/x"]\\n' > ${hook}`]);
    const h = strait('githost', 'serve', '--port', '0', '--state-dir', dir, '--config', hook);
    assert.equal(h.status, 2);
    assert.match(h.stderr, /must be an http\(s\) URL on loopback/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
