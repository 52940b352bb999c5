// The local world (docs/world.md) with `tunnels: false`: without the gateway daemons and node agents the
// clusters of a world cannot reach each other.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_WORLD } from '../../src/world/world-file/index.js';
import { upWorld } from '../helpers/world.js';

test('a world without tunnels keeps its clusters apart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-notun-'));
  const file = join(dir, 'world.json');
  writeFileSync(file, JSON.stringify({ ...DEFAULT_WORLD, tunnels: false }));
  const world = upWorld(['--world', file]);
  try {
    const echoB = world.record().clusters[1]?.pods.find((p) => p.name.startsWith('echo'))?.ip;
    const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '2', `http://${echoB}:8080/`]);
    assert.notEqual(r.status, 0, 'no route between clusters without the tunnel');
    assert.equal(world.exec('cluster-a/default/client', ['curl', '-s', '-m', '2', 'http://echo:8080/']).status, 0);
  } finally {
    world.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
