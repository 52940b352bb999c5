// The state dir's lock names the process that stays: a detached start locks first and names
// its world's owner only once that owner is spawned; a start refused in between waits for
// that name instead of naming the short-lived `strait up --detach`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LOCK_FILE, lockStateDir } from '../../src/world/state-lock/index.js';

const MODULE = fileURLToPath(new URL('../../src/world/state-lock/index.js', import.meta.url));

/** a process that locks `dir` unnamed, prints "locked", names `owner` after `delayMs`, holds the lock 4 s */
function detachedStart(dir: string, owner: number, delayMs: number): Promise<() => void> {
  const script = `
    const { lockStateDir } = await import(${JSON.stringify(MODULE)});
    const lock = lockStateDir(${JSON.stringify(dir)}, 'strait down', null);
    console.log('locked');
    setTimeout(() => lock.setHolder(${owner}), ${delayMs});
    setTimeout(() => lock.release(), 4000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ready, fail) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('locked')) ready(() => child.kill());
    });
    child.on('exit', (code) => fail(new Error(`the locking process exited (${code}) before locking`)));
  });
}

test('a start refused while a detached start spawns its owner names that owner, not the starting CLI', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-lock-unit-'));
  const stop = await detachedStart(dir, 424242, 400);
  try {
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), '', 'unnamed until the owner runs');
    const t0 = performance.now();
    assert.throws(
      () => lockStateDir(dir, 'strait down'),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STRAIT_ERR_WORLD_RUNNING');
        assert.match(err.message, /\(pid 424242 holds its lock, world\.lock\)/);
        return true;
      },
    );
    const ms = performance.now() - t0;
    assert.ok(ms >= 300 && ms < 2500, `waited for the name, no longer (${Math.round(ms)} ms)`);
  } finally {
    stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a foreground start names itself at once; a clean release leaves nothing to take over', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-lock-unit-'));
  try {
    const lock = lockStateDir(dir, 'strait down');
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), `${process.pid}\n`);
    lock.release();
    const next = lockStateDir(dir, 'strait down', 1234);
    assert.equal(next.staleHolder, undefined);
    next.hand(); // left named, as a killed world leaves it
    const after = lockStateDir(dir, 'strait down');
    assert.equal(after.staleHolder, 1234, 'a pid left in the file is a world that ended without stopping');
    after.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
