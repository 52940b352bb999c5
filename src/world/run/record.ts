// world.json in the state dir: written by the `strait up` process that owns a world (or by
// the supervisor of a detached world, process.ts), read by status, exec, down and the store clients.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { readWorldRecord, stateFiles, type WorldRecord } from '../../platform/cli-kit/index.js';

// one record type and one reader (src/platform/cli-kit/world-record.ts); the writers live here
export { readWorldRecord, type WorldRecord };

export function writeWorldRecord(stateDir: string, rec: WorldRecord): void {
  const file = stateFiles(stateDir).world;
  writeFileSync(`${file}.tmp`, JSON.stringify(rec, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

export function removeWorldRecord(stateDir: string, pid: number): void {
  const rec = readWorldRecord(stateDir);
  if (rec && rec.pid === pid) rmSync(stateFiles(stateDir).world, { force: true });
}
