// `strait login` without --username/--password: in a terminal it asks (the password without
// echo), as argocd does; without a terminal it says which flag is missing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { ask } from '../../src/gitops/cli/index.js';
import { BIN } from '../helpers/world.js';

test('ask: the question is shown, a secret answer is not echoed', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
  });
  const answer = ask('Password: ', true, input, output);
  input.write('s3cret-pass\n');
  assert.equal(await answer, 's3cret-pass');
  assert.match(shown, /Password: /);
  assert.doesNotMatch(shown, /s3cret/);
});

test('ask: a user name is echoed as typed', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
  });
  const answer = ask('Username: ', false, input, output);
  input.write('admin\n');
  assert.equal(await answer, 'admin');
  // readline's cursor moves between the prompt and the echo
  assert.match(shown.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g'), ''), /Username: admin/);
});

test('login without --username and no terminal: a usage error naming the flag', () => {
  const r = spawnSync(process.execPath, [BIN, 'login', '127.0.0.1:1', '--plaintext'], { encoding: 'utf8', input: '' });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /STRAIT_ERR_USAGE: --username is required when there is no terminal to ask on/);
});

test('login --help: the password is taken as it is (no base64), and may be asked for', () => {
  const r = spawnSync(process.execPath, [BIN, 'login', '--help'], { encoding: 'utf8' });
  assert.doesNotMatch(r.stdout, /base64/);
  assert.match(r.stdout, /--password <password>\s+the user's password as it is/);
});
