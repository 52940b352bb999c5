// world.json in the state dir: written by the `strait up` process that owns a world (or by
// the supervisor of a detached world, process.ts), read by status, exec, down and the store clients.
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readInput, stateFiles } from '../../platform/cli-kit/index.js';
import type { WorldState } from '../supervisor/index.js';

export interface WorldRecord extends WorldState {
  version: 1;
  /** pid of the `strait up` process that owns the world (kill it and the world is gone) */
  pid: number;
  /** host pid of the world supervisor (pid 1 of the private tree): nsenter -t */
  supervisorPid: number;
  stateDir: string;
  startedAt: string;
}

export function readWorldRecord(stateDir: string): WorldRecord | undefined {
  const file = stateFiles(stateDir).world;
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readInput(file)) as WorldRecord;
  } catch {
    return undefined;
  }
}

export function writeWorldRecord(stateDir: string, rec: WorldRecord): void {
  const file = stateFiles(stateDir).world;
  writeFileSync(`${file}.tmp`, JSON.stringify(rec, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

export function removeWorldRecord(stateDir: string, pid: number): void {
  const rec = readWorldRecord(stateDir);
  if (rec && rec.pid === pid) rmSync(stateFiles(stateDir).world, { force: true });
}
