// One world per state dir: `strait up` takes an exclusive flock(2) on <state dir>/world.lock
// before it reads or writes anything else there, and hands the descriptor to the world it
// starts, so the lock is held for as long as any process of that world lives (the kernel
// drops it when the last one exits, SIGKILL included: a lock never outlives its world).
// The file names the pid that holds it (the `strait up` process, or for a detached world
// its owner, as world.json does: the file stays empty until that owner is started, so a
// refused start never names the short-lived `strait up --detach`); a clean stop empties it,
// so a pid found there by the next holder is a world that ended without stopping (killed),
// which that holder reports.
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync, constants as fsConstants } from 'node:fs';
import { join } from 'node:path';
import { E } from '../../base/errors/index.js';
import { tryLockFile } from '../../platform/fs/index.js';

export const LOCK_FILE = 'world.lock';

export interface StateDirLock {
  /** the lock file's descriptor: pass it to the world's processes (their stdio) to share the lock */
  fd: number;
  path: string;
  /** the pid an earlier world left in the lock file when it ended without stopping (killed) */
  staleHolder?: number;
  /** record the pid that owns the world (a detached world's owner) */
  setHolder(pid: number): void;
  /** a clean stop: empty the file and close this descriptor (the lock is free once every holder has closed it) */
  release(): void;
  /** close this descriptor and leave the file as it is (the world's processes keep the lock) */
  hand(): void;
}

function holderIn(fd: number): number | undefined {
  try {
    const m = /^(\d+)\s*$/.exec(readFileSync(fd, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function writeHolder(fd: number, pid: number | undefined): void {
  ftruncateSync(fd, 0);
  if (pid !== undefined) writeSync(fd, `${pid}\n`, 0);
}

/** how long a refused start waits for the holder to name itself (a detached start names its owner once spawned) */
const HOLDER_WAIT_MS = 3000;

/**
 * Lock `stateDir` for a world run by `pid` (default: this process; null: named later
 * with setHolder, by a detached start once its owner runs), or throw
 * STRAIT_ERR_WORLD_RUNNING naming the pid that holds it.
 */
export function lockStateDir(stateDir: string, stop: string, pid: number | null = process.pid): StateDirLock {
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, LOCK_FILE);
  const fd = openSync(path, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o600);
  if (!tryLockFile(fd)) {
    // the holder names itself right after taking the lock (a detached start: once its owner
    // is spawned): give it a moment
    let holder = holderIn(fd);
    for (let i = 0; holder === undefined && i < HOLDER_WAIT_MS / 25; i++) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      holder = holderIn(fd);
    }
    closeSync(fd);
    throw E.worldRunning(stateDir, holder ?? 0, stop);
  }
  const earlier = holderIn(fd);
  writeHolder(fd, pid ?? undefined);
  let open = true;
  const close = (): void => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    fd,
    path,
    ...(earlier !== undefined && earlier !== pid ? { staleHolder: earlier } : {}),
    setHolder: (p: number) => writeHolder(fd, p),
    release: () => {
      if (open) writeHolder(fd, undefined);
      close();
    },
    hand: close,
  };
}

/**
 * After a world stopped (`strait down`): empty its lock file, when no process of it holds
 * the lock any more, so the next `strait up` does not report a killed world.
 */
export function clearStateDirLock(stateDir: string): void {
  let fd: number;
  try {
    fd = openSync(join(stateDir, LOCK_FILE), fsConstants.O_RDWR);
  } catch {
    return;
  }
  try {
    if (tryLockFile(fd)) writeHolder(fd, undefined);
  } finally {
    closeSync(fd);
  }
}
