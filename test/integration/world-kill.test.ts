// Issue 2, item 9: after kill -9 of `strait up`, everything the world made is gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostNetworkState, isWorldLinkName, upWorld, waitGone, worldPids, strait } from '../helpers/world.js';

test('kill -9 of strait up: every world process, namespace and interface is gone', async () => {
  const before = hostNetworkState();
  const world = upWorld();
  try {
    const rec = world.record();
    const pids = worldPids(rec.supervisorPid);
    assert.ok(pids.length >= 3, `world processes: ${pids}`);
    process.kill(rec.pid, 'SIGKILL');
    assert.deepEqual(await waitGone([rec.pid, ...pids]), [], 'no world process survives');
    const after = hostNetworkState();
    assert.deepEqual(after.netns.filter((n) => !before.netns.includes(n)).filter((n) => /^cluster-/.test(n)), []);
    assert.deepEqual(after.links.filter((l) => !before.links.includes(l)).filter(isWorldLinkName), []);
    // the stale world.json is recognised as dead; a new world can start on the same state dir
    const status = strait(['status', '--state-dir', world.stateDir]);
    assert.equal(status.status, 5);
    const again = strait(['up', '--detach', '--state-dir', world.stateDir]);
    assert.equal(again.status, 0, again.stderr);
    const r = world.exec('cluster-b/default/client', ['curl', '-s', '-m', '5', 'http://echo.default.svc.cluster.local:8080/']);
    assert.equal(r.status, 0, r.stderr);
  } finally {
    world.cleanup();
  }
});
