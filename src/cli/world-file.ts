// world.json in the state dir: written by the `strait up` process that owns a world,
// read by status, exec, down and the store clients.
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { E } from '../base/errors/index.js';
import { isAlive, readWorldRecord, resolveStateDir, type WorldRecord, type WorldState } from '../platform/cli-kit/index.js';

export { isAlive, readWorldRecord, type WorldRecord } from '../platform/cli-kit/index.js';
export { removeWorldRecord, writeWorldRecord } from '../world/run/index.js';

/** The running world of a state dir, or STRAIT_ERR_WORLD_NOT_RUNNING. */
export function runningWorld(stateDir: string): WorldRecord {
  const rec = readWorldRecord(stateDir);
  if (!rec || !isAlive(rec.pid) || !isAlive(rec.supervisorPid)) throw E.worldNotRunning(stateDir);
  return rec;
}

/** A pod of the running world by CLUSTER/NAMESPACE/POD, or the error exec reports. */
export function findPod(rec: WorldRecord, ref: string): WorldState['clusters'][number]['pods'][number] {
  const [clusterName, namespace, podName, extra] = ref.split('/');
  if (!clusterName || !namespace || !podName || extra !== undefined) throw E.podNotFound(ref);
  const cluster = rec.clusters.find((c) => c.name === clusterName);
  if (!cluster)
    throw E.clusterUnknown(
      clusterName,
      rec.clusters.map((c) => c.name),
    );
  const pod = cluster.pods.find((p) => p.namespace === namespace && p.name === podName);
  if (!pod) throw E.podNotFound(ref);
  return pod;
}

/**
 * nsenter arguments that run `command` inside a pod's network namespace (with its resolv.conf).
 * Through env(1): a program that is not found exits 127 and one that cannot run 126, as
 * shells and kubectl report them (`ip netns exec` alone exits 1).
 */
export function podExecArgv(rec: WorldRecord, netns: string, command: string[]): string[] {
  return [
    '-t',
    String(rec.supervisorPid),
    '-m',
    '-p',
    ...(rec.userNamespace ? ['-U', '--preserve-credentials'] : []),
    '--',
    'ip',
    'netns',
    'exec',
    netns,
    'env',
    '--',
    ...command,
  ];
}

export interface PodExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a program inside a pod and collect its output (asynchronously; killed after timeoutMs). */
export function execInPod(rec: WorldRecord, netns: string, command: string[], timeoutMs = 15_000): Promise<PodExecResult> {
  return new Promise((done) => {
    const child = spawn('nsenter', podExecArgv(rec, netns, command), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      done({ code: 127, stdout, stderr: stderr + err.message });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code: code ?? 128 + (signal ? osConstants.signals[signal] : 0), stdout, stderr });
    });
  });
}

/**
 * What a world writes in its state dir and keeps across restarts (the supervisor: world.json,
 * store/, store.sock, store.token, logs/; src/world/run/components.ts: tunnel/, githost/,
 * githost-world.json, control/, mesh/, <cluster>.multicluster.json; the multicluster daemon:
 * broker-info.subm; strait up: host-ports.json; strait exec: pod-config/; strait demo gitops --world:
 * gitops-demo/). Nothing else in the dir is the world's.
 */
const WORLD_ENTRIES = [
  'world.json',
  'world.json.tmp',
  'store',
  'store.sock',
  'store.token',
  'logs',
  'tunnel',
  'githost',
  'githost-world.json',
  'control',
  'mesh',
  'broker-info.subm',
  'broker-info.subm.tmp',
  'host-ports.json',
  'pod-config',
  'gitops-demo',
];
const isWorldEntry = (name: string): boolean => WORLD_ENTRIES.includes(name) || /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\.multicluster\.json$/.test(name);

/** The world state an earlier run left in a state dir (the entries a new world resumes from). */
export function worldStateIn(stateDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(stateDir);
  } catch {
    return [];
  }
  // logs alone are no state to resume
  return names.filter((n) => isWorldEntry(n) && n !== 'logs').sort();
}

/** `strait up --fresh`: remove the world's own entries of a state dir (never anything else); returns what was removed. */
export function removeWorldState(stateDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(stateDir);
  } catch {
    return [];
  }
  const gone = names.filter(isWorldEntry).sort();
  // rmSync removes a symlink itself, never what it points to
  for (const n of gone) rmSync(join(stateDir, n), { recursive: true, force: true });
  return gone;
}

/** A path (or any text) as one word of a POSIX shell command: as it is when that is safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** The command that stops the world of `stateDir`: with --state-dir unless it is the default one. */
export function downCommand(stateDir: string): string {
  if (stateDir === resolveStateDir()) return 'strait down';
  return `strait down --state-dir ${shellWord(stateDir)}`;
}
