// Gateway HA failover: on loss of the active gateway traffic resumes within 1 s (docs/gateway-and-agent.md).
// A world with two gateway nodes in cluster-a (test/helpers/world-ha.ts); cluster-a's
// client sends an HTTP request over a fresh TCP connection every 10 ms to cluster-b's echo
// (agent -> VXLAN -> active gateway -> PSK tunnel -> ...). The failover time is the
// longest gap between the send times of two successful requests (the loss window).
// Cases, each run several times:
//   kill -9     the active gateway process dies: the passive one sees its liveness link
//               close and takes the lease at once;
//   SIGSTOP     the active one freezes (alive, holding its sockets): the passive one takes
//               the lease when it expires (leaseDurationMs, 1000 ms in the world);
//   none        no fault: the same probes' largest gap, the reference in the same run
//               (scheduling jitter of a busy machine).
// Prints every run, the median per case, the goal, and the load average beside each.
//   node dist/bench/gateway-failover.js [--runs N]      (run from the repository root)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayPid, leaseHolder, probeFromPod, writeHaWorld } from '../test/helpers/world-ha.js';
import { upWorld, type TestWorld } from '../test/helpers/world.js';

const arg = (name: string, d: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] as string) : d;
};
const RUNS = Math.max(1, Math.min(10, Number(arg('--runs', '5'))));
const GOAL_MS = 1000;
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

async function settled(w: TestWorld): Promise<string> {
  // both gateways up again (the killed one restarts passive) and the holder known
  const deadline = Date.now() + 30_000;
  for (;;) {
    const h = leaseHolder(w.stateDir, 'cluster-a');
    const both = ['gateway', 'gateway-2'].every((n) => gatewayPid(w.stateDir, 'cluster-a', n) !== undefined);
    if (h?.holder && both) {
      await sleep(1500); // the restarted one has found the active one
      return h.holder;
    }
    if (Date.now() > deadline) throw new Error('gateways did not settle');
    await sleep(200);
  }
}

async function run(w: TestWorld, echo: string, fault: 'kill' | 'stop' | 'none'): Promise<{ gap: number; load: string; transitions: number }> {
  await settled(w);
  // the holder before the probes start (reading it takes a CLI run: not inside the window);
  // a spurious failover meanwhile shows in the transitions column
  const lease = leaseHolder(w.stateDir, 'cluster-a');
  const holder = lease?.holder ?? '';
  const pid = gatewayPid(w.stateDir, 'cluster-a', holder);
  if (!pid) throw new Error(`no pid for ${holder}`);
  const p = probeFromPod(w.stateDir, 'cluster-a/default/client', `http://${echo}:8080/`, 10, 4000);
  await p.started;
  await sleep(500);
  const l = load();
  if (fault === 'kill') process.kill(pid, 'SIGKILL');
  if (fault === 'stop') process.kill(pid, 'SIGSTOP');
  const r = await p.done;
  if (fault === 'stop') process.kill(pid, 'SIGCONT'); // it finds the lease taken and exits; restarted passive
  if (r.ok === 0) throw new Error(`no successful probe: ${JSON.stringify(r)}`);
  const transitions = (leaseHolder(w.stateDir, 'cluster-a')?.transitions ?? 0) - (lease?.transitions ?? 0);
  return { gap: r.maxGapMs, load: l, transitions };
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'strait-failover-'));
  const w = upWorld(['--world', writeHaWorld(tmp)]);
  try {
    const echo = w
      .record()
      .clusters.find((c) => c.name === 'cluster-b')!
      .pods.find((p) => p.name.startsWith('echo'))!.ip;
    console.log(`gateway failover: ${RUNS} runs per case, HTTP probe every 10 ms, goal < ${GOAL_MS} ms`);
    const results: Record<string, number[]> = { none: [], kill: [], stop: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const fault of ['none', 'kill', 'stop'] as const) {
        const r = await run(w, echo, fault);
        results[fault]!.push(r.gap);
        console.log(`  run ${i + 1} ${fault.padEnd(4)}  loss window ${String(r.gap).padStart(5)} ms   lease transitions +${r.transitions}   (load ${r.load})`);
      }
    }
    const ref = median(results['none']!);
    console.log('');
    console.log('case                        median    runs (ms)                      vs goal');
    for (const [name, key] of [
      ['no fault (reference)', 'none'],
      ['kill -9 of the active', 'kill'],
      ['SIGSTOP (lease expiry)', 'stop'],
    ] as const) {
      const m = median(results[key]!);
      console.log(
        `${name.padEnd(26)} ${String(Math.round(m)).padStart(6)} ms  ${results[key]!.join(', ').padEnd(30)} ${(m / GOAL_MS).toFixed(2)}x of 1 s${key !== 'none' ? `, ${(m / Math.max(1, ref)).toFixed(1)}x the reference` : ''}`,
      );
    }
    console.log(`load average at the end: ${load()} (2 cores shared)`);
  } finally {
    w.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
