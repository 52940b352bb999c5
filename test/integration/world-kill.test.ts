// The local world (docs/world.md): after kill -9 of `strait up` (foreground) or of a detached world's
// owner, every process, namespace and interface of the world is gone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, hostNetworkState, isWorldLinkName, strait, upWorld, waitGone, worldPids } from '../helpers/world.js';

async function killAndCheck(rec: { pid: number; supervisorPid: number }, before: ReturnType<typeof hostNetworkState>): Promise<void> {
  const pids = worldPids(rec.supervisorPid);
  assert.ok(pids.length >= 3, `world processes: ${pids}`);
  process.kill(rec.pid, 'SIGKILL');
  assert.deepEqual(await waitGone([rec.pid, ...pids]), [], 'no world process survives');
  const after = hostNetworkState();
  assert.deepEqual(
    after.netns.filter((n) => !before.netns.includes(n)).filter((n) => /^cluster-/.test(n)),
    [],
  );
  assert.deepEqual(after.links.filter((l) => !before.links.includes(l)).filter(isWorldLinkName), []);
}

test('kill -9 of a foreground strait up: every world process, namespace and interface is gone', async () => {
  const before = hostNetworkState();
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-kill-'));
  const up = spawn(process.execPath, [BIN, 'up', '--state-dir', stateDir], { stdio: 'ignore', detached: true });
  try {
    const file = join(stateDir, 'world.json');
    const deadline = Date.now() + 30_000;
    let rec: { pid: number; supervisorPid: number; status: string } | undefined;
    while (Date.now() < deadline) {
      if (existsSync(file)) {
        rec = JSON.parse(readFileSync(file, 'utf8'));
        if (rec?.status === 'ready') break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(rec?.pid, up.pid, 'world.json names the strait up process as owner');
    await killAndCheck(rec as { pid: number; supervisorPid: number }, before);
    // the stale world.json is recognised as dead
    const status = strait(['status', '--state-dir', stateDir]);
    assert.equal(status.status, 5);
    assert.match(status.stderr, /STRAIT_ERR_WORLD_NOT_RUNNING/);
  } finally {
    try {
      process.kill(up.pid as number, 'SIGKILL');
    } catch {
      /* gone */
    }
    rmSync(stateDir, { recursive: true, force: true });
  }
});

test("kill -9 of a detached world's owner; a new world then starts on the same state dir", async () => {
  const before = hostNetworkState();
  const world = upWorld();
  try {
    await killAndCheck(world.record(), before);
    const again = strait(['up', '--detach', '--state-dir', world.stateDir]);
    assert.equal(again.status, 0, again.stderr);
    const r = world.exec('cluster-b/default/client', ['curl', '-s', '-m', '5', 'http://echo.default.svc.cluster.local:8080/']);
    assert.equal(r.status, 0, r.stderr);
  } finally {
    world.cleanup();
  }
});
