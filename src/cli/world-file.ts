// world.json in the state dir: written by the `strait up` process that owns a world,
// read by status, exec, down and the store clients.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { E } from '../base/errors/index.js';
import type { WorldState } from '../control/world/index.js';
import { stateFiles } from './state-dir.js';

export interface WorldRecord extends WorldState {
  version: 1;
  /** pid of the `strait up` process that owns the world (kill it and the world is gone) */
  pid: number;
  /** host pid of the world supervisor (pid 1 of the private tree): nsenter -t */
  supervisorPid: number;
  stateDir: string;
  startedAt: string;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readWorldRecord(stateDir: string): WorldRecord | undefined {
  const file = stateFiles(stateDir).world;
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as WorldRecord;
  } catch {
    return undefined;
  }
}

/** The running world of a state dir, or STRAIT_ERR_WORLD_NOT_RUNNING. */
export function runningWorld(stateDir: string): WorldRecord {
  const rec = readWorldRecord(stateDir);
  if (!rec || !isAlive(rec.pid) || !isAlive(rec.supervisorPid)) throw E.worldNotRunning(stateDir);
  return rec;
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
