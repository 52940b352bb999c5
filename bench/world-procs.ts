// The processes of a running world, their memory and CPU time, for the benches that measure them.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/**
 * Every process of a world: those in the owner's session (strait up, unshare, the
 * supervisor) and every process of the world's pid namespace (components run in
 * sessions of their own).
 */
export function worldPids(sid: number): number[] {
  const hostNs = readlinkSync('/proc/self/ns/pid');
  const procs: { pid: number; sid: number; ns: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.push({ pid: Number(name), sid: Number(fields[3]), ns: readlinkSync(`/proc/${name}/ns/pid`) }); // field 6 of stat: session id
    } catch {
      /* gone */
    }
  }
  const worldNs = new Set(procs.filter((p) => p.sid === sid && p.ns !== hostNs).map((p) => p.ns));
  return procs.filter((p) => p.sid === sid || worldNs.has(p.ns)).map((p) => p.pid);
}

/** RSS and PSS of a process in bytes (0 when it is gone). */
export function memoryOf(pid: number): { rss: number; pss: number } {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { rss: kb('Rss') * 1024, pss: kb('Pss') * 1024 };
  } catch {
    return { rss: 0, pss: 0 };
  }
}

/**
 * User + system CPU time of processes so far, ms (/proc/PID/stat, clock ticks of 10 ms; a
 * process gone meanwhile counts 0); `withChildren`: their reaped children's too.
 */
export function cpuMs(pids: readonly number[], withChildren = false): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]) + (withChildren ? Number(f[13]) + Number(f[14]) : 0); // utime, stime, cutime, cstime
    } catch {
      /* gone */
    }
  }
  return ticks * 10;
}
