// Starting and stopping private test worlds (each with its own temp state dir, so
// test files can run in parallel).
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../../src/cli/world-file.js';

export const root = process.env['STRAIT_ROOT'] ?? process.cwd();
export const BIN = join(root, 'bin', 'strait.js');

/** `strait ARGS` without blocking (a test polls several surfaces side by side, each at its own pace): exit status and stdout */
export function straitAsync(args: string[]): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.on('close', (status) => resolve({ status, stdout }));
  });
}

/** `strait ARGS`, killed after `timeoutMs` (a ceiling against a hung CLI, not a measure) */
export function strait(args: string[], input?: string, timeoutMs = 60_000): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input, timeout: timeoutMs });
}

export interface TestWorld {
  stateDir: string;
  record(): {
    pid: number;
    supervisorPid: number;
    clusters: {
      name: string;
      pods: { namespace: string; name: string; ip: string; netns: string }[];
      services: { name: string; clusterIP?: string }[];
      nodes: { netns: string }[];
    }[];
    components: { name: string; pid?: number; metrics?: string }[];
    /** the control module's API as the host reaches it */
    control?: string;
  };
  exec(pod: string, cmd: string[], input?: string): SpawnSyncReturns<string>;
  down(): SpawnSyncReturns<string>;
  /** what `strait up --detach` printed */
  upOutput: string;
  cleanup(): void;
}

/** `strait up --detach` in a new temp state dir, or in `stateDir` (a restart of a world that was there) */
export function upWorld(extra: string[] = [], stateDir = mkdtempSync(join(tmpdir(), 'strait-world-'))): TestWorld {
  // a world's start took more than 60 s at load 30 (the world's own readiness bounds its wait)
  const r = strait(['up', '--detach', '--state-dir', stateDir, ...extra], undefined, 180_000);
  if (r.status !== 0) throw new Error(`strait up failed (${r.status ?? r.signal}): ${r.stderr}${r.stdout}`);
  return {
    stateDir,
    upOutput: r.stdout + r.stderr,
    record: () => JSON.parse(readFileSync(join(stateDir, 'world.json'), 'utf8')),
    exec: (pod, cmd, input) => strait(['exec', '--state-dir', stateDir, pod, '--', ...cmd], input),
    down: () => strait(['down', '--state-dir', stateDir]),
    cleanup: () => {
      strait(['down', '--state-dir', stateDir]);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** host view: netns names and interface names of the host's own namespaces */
export function hostNetworkState(): { netns: string[]; links: string[] } {
  const netns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter(Boolean)
    .sort();
  const links = spawnSync('ip', ['-o', 'link'], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? '')
    .filter(Boolean)
    .sort();
  return { netns, links };
}

/** true while the process exists and is not a zombie (the CLI's own check) */
export const alive = isAlive;

export async function waitGone(pids: number[], ms = 10_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let left = pids.filter(alive);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = left.filter(alive);
  }
  return left;
}

/** host pids of every process in the world's pid namespace */
export function worldPids(supervisorPid: number): number[] {
  const out = spawnSync(
    'sh',
    [
      '-c',
      `ns=$(readlink /proc/${supervisorPid}/ns/pid) || exit 0; for p in /proc/[0-9]*; do [ "$(readlink $p/ns/pid 2>/dev/null)" = "$ns" ] && echo \${p#/proc/}; done`,
    ],
    { encoding: 'utf8' },
  );
  return out.stdout.split('\n').filter(Boolean).map(Number);
}

/**
 * Interface names a world makes (inet0, ul<c>, c<c>n<n>, c<c>g<n>, vp<k>, cbr0, eth0/1).
 * Host checks look for these only, so another engineer's test on the same machine
 * cannot make ours fail.
 */
export function isWorldLinkName(name: string): boolean {
  return /^(inet0|ul\d+|c\d+[ng]\d+|vp\d+|cbr0|eth[01])$/.test(name);
}
