// A connection made straight to a proxy's own port (15006 inbound, 15001 outbound) is not
// redirected, so its "original destination" is the proxy itself: relayed, it would connect
// to the same port again, and again, each hop a new connection, until the process runs out
// of descriptors. With the node-level proxy that would take every pod of the node down.
// The attacker is any client that can reach a pod's address (here a pod outside the mesh)
// or the workload itself; PERMISSIVE, where plaintext is relayed. Both dataplanes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

for (const dataplane of ['sidecar', 'node'] as const) {
  test(`${dataplane} dataplane: connections straight to the proxy's own ports are reset, not relayed to itself`, () => {
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
      { encoding: 'utf8', timeout: 90_000, env: { ...process.env, STRAIT_ROOT: root, STRAIT_TEST_DATAPLANE: dataplane, STRAIT_TEST_LOOP_PROBE: '1' } },
    );
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
    const out = JSON.parse(r.stdout) as {
      before: { exit: number };
      probes: Record<string, { exit: number; code: string }>;
      fds: number[];
      after: { exit: number; code: string };
    };
    assert.equal(out.before.exit, 0);
    for (const [name, p] of Object.entries(out.probes)) {
      // reset at once (the loop made curl wait until its --max-time: exit 28). The reset can
      // reach curl before it has seen its own connect() complete, which curl reports as a
      // failed connect (exit 7) rather than a reset (56): both mean nothing was relayed.
      assert.ok([7, 56].includes(p.exit), `${name}: reset (curl exit 56 or 7), got exit ${p.exit} code ${p.code}`);
    }
    for (const n of out.fds) assert.ok(n < 100, `the proxy holds ${n} descriptors after the probes`);
    assert.deepEqual([out.after.exit, out.after.code], [0, '200'], 'the pod is still served');
  });
}
