// A proxy process killed under the mesh agent, with both dataplanes: with the node dataplane
// one process serves every pod, so its death is every pod's; the agent restarts it and
// attaches every pod again, and the pods' redirect stays meanwhile, so a client outside the
// mesh never reaches a STRICT application in plaintext.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

type Status = { pod: string; ready: boolean; pid: number; restarts: number };

for (const dataplane of ['sidecar', 'node'] as const) {
  test(`${dataplane} dataplane: a killed proxy is restarted, its pods served again, STRICT never bypassed`, () => {
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
      { encoding: 'utf8', timeout: 120_000, env: { ...process.env, STRAIT_ROOT: root, STRAIT_TEST_DATAPLANE: dataplane, STRAIT_TEST_KILL: '1' } },
    );
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
    const out = JSON.parse(r.stdout) as {
      before: Status[];
      after: Status[];
      whileDown: { exit: number };
      inMesh: { exit: number; code: string };
      outsider: { exit: number };
      readyMs: number;
    };
    const pids = (s: Status[]) => [...new Set(s.map((x) => x.pid))];
    assert.equal(pids(out.before).length, dataplane === 'node' ? 1 : 2);
    assert.ok(
      out.after.every((s) => s.ready),
      JSON.stringify(out.after),
    );
    assert.deepEqual(
      pids(out.after).filter((p) => pids(out.before).includes(p)),
      [],
      'new processes',
    );
    assert.ok(
      out.after.every((s) => s.restarts >= 1),
      "counted as a restart of each pod's proxy",
    );
    // refused (7) or reset (56) while down: never an answer from the application
    assert.ok([7, 56].includes(out.whileDown.exit), `outsider while no proxy ran: exit ${out.whileDown.exit}`);
    assert.deepEqual([out.inMesh.exit, out.inMesh.code], [0, '200']);
    assert.equal(out.outsider.exit, 56);
    console.log(`# ${dataplane}: pods served again ${out.readyMs.toFixed(0)} ms after SIGKILL`);
  });
}
