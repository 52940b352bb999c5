import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const strait = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8' });

test('strait --help lists commands and exits 0', () => {
  const r = strait('--help');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: strait/);
  assert.match(r.stdout, /version/);
});

test('strait with an unknown command exits 2 with a message', () => {
  const r = strait('no-such-command');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown command/);
});

test('strait version -o json prints the package version', () => {
  const r = strait('version', '-o', 'json');
  assert.equal(r.status, 0, r.stderr);
  assert.match(JSON.parse(r.stdout).version, /^\d+\.\d+\.\d+/);
});
