// The mesh root kept on disk (mode 0600) so that every process of a world, and a restarted
// one, uses the same root. One process makes it: the first to create `<file>.lock`
// (exclusive create) makes the key and writes the file; the others wait for the file and load
// it (the world starts every cluster's mesh agent at once, and each used to make an RSA key
// of its own, all but one thrown away: 0.2-0.6 s of CPU each on the boot's busiest seconds).
// A lock whose maker is gone (its process ended, or it is older than the wait) is taken over.
import { closeSync, fsyncSync, linkSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MeshCa } from './mesh-ca.js';

/** how long a process waits for another's root before it takes the lock over */
const MAKER_WAIT_MS = 30_000;
const POLL_MS = 20;

function load(file: string): MeshCa | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const j = JSON.parse(text) as { trustDomain: string; certPem: string; keyPem: string };
  return MeshCa.load(j.trustDomain, { certPem: j.certPem, keyPem: j.keyPem });
}

/** whether the process that wrote `lock` still runs (its pid is in the file) and the lock is younger than the wait */
function makerAlive(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'));
    if (Date.now() - statSync(lock).mtimeMs > MAKER_WAIT_MS) return false;
    if (!(Number.isInteger(pid) && pid > 0)) return true; // being written
    if (pid === process.pid) return false; // a maker before a restart whose pid this process now has
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // ENOENT (released) or ESRCH (gone)
  }
}

/** fsync a file or a directory */
function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function tryLock(lock: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { mode: 0o600, flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

export async function loadOrCreateCa(file: string, trustDomain = 'cluster.local'): Promise<MeshCa> {
  const lock = `${file}.lock`;
  for (;;) {
    const have = load(file);
    if (have) return have;
    if (tryLock(lock)) {
      try {
        const again = load(file); // written between our look and our lock
        if (again) return again;
        // a maker that died between writing its root aside and linking it left the private key there
        const prefix = `${basename(file)}.`;
        for (const f of readdirSync(dirname(file))) if (f.startsWith(prefix) && f.endsWith('.tmp')) rmSync(join(dirname(file), f), { force: true });
        const ca = MeshCa.create({ trustDomain });
        // written aside and linked in whole: a reader never sees half a file, and a root
        // another process linked first (after a lock taken over) wins
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ trustDomain, ...ca.material() }), { mode: 0o600 });
        syncPath(tmp); // on disk before its name is: never an empty root after a power loss
        try {
          linkSync(tmp, file);
          syncPath(dirname(file));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          return load(file) ?? ca;
        } finally {
          rmSync(tmp, { force: true });
        }
        return ca;
      } finally {
        rmSync(lock, { force: true });
      }
    }
    if (!makerAlive(lock)) {
      rmSync(lock, { force: true });
      continue;
    }
    await sleep(POLL_MS);
  }
}
