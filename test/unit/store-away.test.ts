// What a resource command says when the store API does not answer: no world in the state dir
// (STRAIT_ERR_WORLD_NOT_RUNNING), or a running world whose store API is away for a moment, as
// during its restart (STRAIT_ERR_STORE_UNAVAILABLE, "may be restarting"): the first was said
// for both before.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { withStore } from '../../src/platform/cli-kit/index.js';

const record = (pid: number) => JSON.stringify({ version: 1, pid, supervisorPid: pid, stateDir: '', startedAt: new Date().toISOString(), clusters: [] });

test('a running world whose store API is away: STRAIT_ERR_STORE_UNAVAILABLE naming the restart; no world: STRAIT_ERR_WORLD_NOT_RUNNING', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-away-'));
  try {
    writeFileSync(join(dir, 'store.token'), 'token\n');
    writeFileSync(join(dir, 'world.json'), record(process.pid));
    await assert.rejects(
      withStore({ cluster: 'cluster-a', stateDir: dir }, (st) => st.list({ apiVersion: 'v1', kind: 'Pod' })),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE') && /store API may be restarting; try again/.test(err.message),
    );
    // a world.json left by a world that is gone (pid 2^22 + 1 is never a live pid here)
    writeFileSync(join(dir, 'world.json'), record(4_194_305));
    await assert.rejects(
      withStore({ cluster: 'cluster-a', stateDir: dir }, (st) => st.list({ apiVersion: 'v1', kind: 'Pod' })),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_WORLD_NOT_RUNNING'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
