import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { E, listErrorCodes, isStraitError } from '../../src/base/errors/index.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

test('docs/errors.md lists exactly the codes of src/base/errors', () => {
  const doc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  const documented = [...doc.matchAll(/^\| `(STRAIT_ERR_[A-Z0-9_]+)` \| (\d+) \|/gm)].map((m) => m[1]);
  const codes = listErrorCodes();
  assert.deepEqual([...documented].sort(), [...new Set(codes)].sort());
  assert.equal(new Set(codes).size, codes.length, 'codes are unique');
});

test('documented exit statuses match the factories', () => {
  const doc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  const exits = new Map([...doc.matchAll(/^\| `(STRAIT_ERR_[A-Z0-9_]+)` \| (\d+) \|/gm)].map((m) => [m[1], Number(m[2])]));
  for (const [name, factory] of Object.entries(E)) {
    assert.equal(factory.exitCode, exits.get(factory.code), `${name} (${factory.code})`);
  }
});

test('errors quote the offending value and keep their code', () => {
  const err = E.configInvalid('world.clusters[0].clusterCIDR', '10.1/16', 'must be an IPv4 CIDR such as 10.1.0.0/16');
  assert.ok(isStraitError(err, 'STRAIT_ERR_CONFIG_INVALID'));
  assert.match(err.message, /"10\.1\/16"/);
  assert.match(err.message, /world\.clusters\[0\]\.clusterCIDR/);
  assert.deepEqual(JSON.parse(JSON.stringify(err)).code, 'STRAIT_ERR_CONFIG_INVALID');
});
