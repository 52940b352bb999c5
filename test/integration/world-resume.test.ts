// World resume (docs/world.md): a second `strait up` brings back the user's objects (a feature) and says
// so; `strait up --fresh` starts clean, removing only what the world wrote in the state dir.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_WORLD } from '../../src/world/world-file/index.js';
import { strait, upWorld } from '../helpers/world.js';

/** the default world's clusters without tunnels, githost and the control module's peers: quicker to boot */
function coreWorld(dir: string): string {
  const file = join(dir, 'core-world.json');
  writeFileSync(file, JSON.stringify({ ...DEFAULT_WORLD, tunnels: false, githost: false }));
  return file;
}

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: mine, namespace: default }\ndata: { a: "1" }\n';

test("a restarted world resumes and says so; --fresh starts clean and keeps what is not the world's", () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-resume-'));
  const elsewhere = mkdtempSync(join(tmpdir(), 'strait-elsewhere-'));
  try {
    const core = ['--world', coreWorld(elsewhere)];
    const first = upWorld(core, stateDir);
    assert.doesNotMatch(first.upOutput, /resuming/);
    const ap = strait(['apply', '--cluster', 'cluster-a', '-f', '-', '--state-dir', stateDir], CM);
    assert.equal(ap.status, 0, ap.stderr);
    assert.equal(first.down().status, 0);
    // the user's own files beside the world's, and a link out of the dir
    writeFileSync(join(stateDir, 'notes.txt'), 'mine\n');
    mkdirSync(join(stateDir, 'stores-of-mine'));
    writeFileSync(join(elsewhere, 'keep.txt'), 'keep\n');
    symlinkSync(elsewhere, join(stateDir, 'logs', 'link-out'));

    const second = upWorld(core, stateDir);
    assert.match(second.upOutput, new RegExp(`resuming the world in ${stateDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} .*\`strait up --fresh\` starts clean`));
    const got = strait(['get', 'configmap', 'mine', '-n', 'default', '--cluster', 'cluster-a', '-o', 'json', '--state-dir', stateDir]);
    assert.equal(got.status, 0, `the ConfigMap came back: ${got.stderr}`);
    assert.equal(second.down().status, 0);

    const fresh = upWorld([...core, '--fresh'], stateDir);
    try {
      assert.match(fresh.upOutput, /starting a fresh world in .* \(removed the earlier run's .*store.*\)/);
      assert.doesNotMatch(fresh.upOutput, /resuming/);
      const gone = strait(['get', 'configmap', 'mine', '-n', 'default', '--cluster', 'cluster-a', '--state-dir', stateDir]);
      assert.notEqual(gone.status, 0, 'the ConfigMap of the earlier run is gone');
      assert.equal(readFileSync(join(stateDir, 'notes.txt'), 'utf8'), 'mine\n');
      assert.ok(existsSync(join(stateDir, 'stores-of-mine')));
      assert.equal(readFileSync(join(elsewhere, 'keep.txt'), 'utf8'), 'keep\n', 'a link out of the state dir is not followed');
    } finally {
      fresh.down();
    }
  } finally {
    strait(['down', '--state-dir', stateDir]);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test('--fresh while the world of that state dir runs is refused and removes nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-fresh-'));
  const w = upWorld(['--world', coreWorld(dir)]);
  try {
    const r = strait(['up', '--fresh', '--detach', '--state-dir', w.stateDir]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /STRAIT_ERR_WORLD_RUNNING/);
    assert.ok(existsSync(join(w.stateDir, 'store')), "the running world's store is still there");
    assert.equal(strait(['status', '--state-dir', w.stateDir]).status, 0);
  } finally {
    w.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
