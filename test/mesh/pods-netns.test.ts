// The mesh traffic outcomes table (docs/mesh.md) in network namespaces, with strait's nftables redirect,
// SO_ORIGINAL_DST, sidecars running as uid 1337, and the real curl from each pod and through
// the ingress gateway. Everything lives in a private namespace tree (unshare): nothing
// touches the host's namespaces.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

test('traffic table: in-mesh client, out-of-mesh client, ingress gateway × PERMISSIVE/DISABLE/STRICT', () => {
  const r = spawnSync(
    'unshare',
    [
      '--net',
      '--mount',
      '--propagation',
      'private',
      '--fork',
      '--kill-child',
      '--',
      process.execPath,
      join(root, 'dist', 'test', 'mesh', 'netns-pods-child.js'),
    ],
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, STRAIT_ROOT: root } },
  );
  assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
  const t = JSON.parse(r.stdout);
  const cell = (c: { exit: number; code: string }) => (c.exit === 0 ? `HTTP ${c.code}` : `exit ${c.exit}`);
  const got = Object.fromEntries(
    Object.entries(t).map(([mode, row]) => {
      const x = row as Record<string, { exit: number; code: string }>;
      return [mode, [cell(x['inMesh']!), cell(x['outsider']!), cell(x['ingress']!)]];
    }),
  );
  console.log(`# ${JSON.stringify(got)}`);
  assert.deepEqual(got, {
    PERMISSIVE: ['HTTP 200', 'HTTP 200', 'HTTP 200'],
    DISABLE: ['HTTP 200', 'HTTP 200', 'HTTP 200'],
    STRICT: ['HTTP 200', 'exit 56', 'HTTP 200'],
  });
  assert.match(t.STRICT.outsider.stderr, /Connection reset by peer/);
});
