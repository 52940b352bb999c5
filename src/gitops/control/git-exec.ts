// The one place the controller runs the real `git`: argument arrays only (no shell)
// and one environment for every invocation. That environment is part of signature
// enforcement: git must read exactly the objects whose hashes were verified, so
// replace refs (refs/replace/*, which anyone with push access can push) and grafts
// are never honoured, and a repoURL cannot pick a command-running transport.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** A path that cannot exist (/dev/null is not a directory): git finds no graft file there, silently. */
const NO_GRAFTS = '/dev/null/strait-no-grafts';

/** An HTTP(S) repository that sends no byte for this long is not reachable (docs/gitops.md). */
export const STALL_SECONDS = 10;
/** Any network git command (fetch, ls-remote; also over SSH, which has no stall limit) ends within this. */
export const NETWORK_TIMEOUT_MS = 300_000;

// read per call: PATH and friends may change while the process runs (tests put a fake gpg first)
export const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '/bin/true',
  GIT_CONFIG_NOSYSTEM: '1',
  LC_ALL: 'C',
  // no ext:: or fd:: transports from a repoURL
  GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
  // objects are read as stored: no refs/replace/* substitution, no info/grafts
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_GRAFT_FILE: NO_GRAFTS,
  // a server that accepts the connection and then sends nothing (frozen, overloaded, a dead
  // peer behind a proxy) is given up on after STALL_SECONDS instead of being waited for forever
  // (git-config(1) http.lowSpeedLimit/lowSpeedTime; a healthy upload-pack sends a keepalive
  // every 5 s while it prepares a pack)
  GIT_HTTP_LOW_SPEED_LIMIT: '1',
  GIT_HTTP_LOW_SPEED_TIME: String(STALL_SECONDS),
});

export interface GitError extends Error {
  exit?: number | string;
  stderr: string;
}

/**
 * Run git; stdout as a Buffer. A failure rejects with git's stderr attached. `timeoutMs`
 * kills a git that has not ended by then (SIGKILL to the process it spawned; its stderr then
 * says so).
 */
export function git(cwd: string | undefined, args: string[], opts: { input?: Buffer | string; maxBuffer?: number; timeoutMs?: number } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const options = {
      cwd,
      env: gitEnv(),
      encoding: 'buffer' as const,
      maxBuffer: opts.maxBuffer ?? 256 * 1024 * 1024,
      timeout: opts.timeoutMs ?? 0,
      killSignal: 'SIGKILL' as const,
    };
    const child = execFile('git', args, options, (err, stdout, stderr) => {
      if (err) {
        const e = err as Error & { code?: number | string; killed?: boolean; signal?: string };
        const limit = opts.timeoutMs ?? 0;
        const timedOut = limit > 0 && e.killed === true && e.signal === 'SIGKILL';
        const text = timedOut ? `no answer within ${limit / 1000} s (git ${args[0]} was stopped)` : stderr.toString().trim() || e.message;
        reject(Object.assign(new Error(`git ${args[0]}: ${text}`), { exit: e.code, stderr: timedOut ? text : stderr.toString() }) as GitError);
      } else {
        resolve(stdout);
      }
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Start a long-running git (e.g. cat-file --batch) with the same environment. */
export function spawnGit(cwd: string, args: string[]): ChildProcessWithoutNullStreams {
  return spawn('git', args, { cwd, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
}
