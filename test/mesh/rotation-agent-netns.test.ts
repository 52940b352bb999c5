// Workload certificates rotated under the mesh agent, in network namespaces, with both
// dataplanes: the controller re-issues each pod's certificate at half its lifetime and
// pushes the new configuration; the pod's proxy (its sidecar, or its entry in the node
// proxy) takes the new identity for new connections without a restart, and the in-mesh
// client keeps getting answers under STRICT all along.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const LIFETIME_MS = 8000;

for (const dataplane of ['sidecar', 'node'] as const) {
  test(`${dataplane} dataplane: certificates of ${LIFETIME_MS / 1000} s rotate under traffic without a failed request or a restart`, () => {
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
        join(root, 'dist', 'test', 'mesh', 'netns-agent-child.js'),
      ],
      {
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, STRAIT_ROOT: root, STRAIT_TEST_DATAPLANE: dataplane, STRAIT_TEST_ROTATION_MS: String(LIFETIME_MS) },
      },
    );
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
    const out = JSON.parse(r.stdout) as {
      first: { expiry: number; updates: number };
      last: { expiry: number; updates: number };
      curls: number[];
      pids: number[];
    };
    assert.ok(out.curls.length >= 10, `${out.curls.length} curls`);
    assert.deepEqual(
      out.curls.filter((e) => e !== 0),
      [],
      'every request answered',
    );
    assert.ok(out.first.expiry > 0 && out.first.expiry <= LIFETIME_MS / 1000, `a short-lived certificate: ${out.first.expiry} s left`);
    assert.ok(out.last.updates >= out.first.updates + 2, `rotations pushed to the server pod's proxy: updates ${out.first.updates} → ${out.last.updates}`);
    // the proxy holds a certificate re-issued after the first one (which has expired by now)
    assert.ok(out.last.expiry > 0, `the current certificate is valid: ${out.last.expiry} s left`);
    console.log(
      `# ${dataplane}: ${out.curls.length} requests, config updates ${out.first.updates} → ${out.last.updates}, certificate expiry ${out.first.expiry} s → ${out.last.expiry} s`,
    );
  });
}
