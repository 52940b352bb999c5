// The one place the controller runs the real `git`: argument arrays only (no shell)
// and one environment for every invocation. That environment is part of signature
// enforcement: git must read exactly the objects whose hashes were verified, so
// replace refs (refs/replace/*, which anyone with push access can push) and grafts
// are never honoured, and a repoURL cannot pick a command-running transport.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** A path that cannot exist (/dev/null is not a directory): git finds no graft file there, silently. */
const NO_GRAFTS = '/dev/null/strait-no-grafts';

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
});

export interface GitError extends Error {
  exit?: number | string;
  stderr: string;
}

/** Run git; stdout as a Buffer. A failure rejects with git's stderr attached. */
export function git(cwd: string | undefined, args: string[], opts: { input?: Buffer | string; maxBuffer?: number } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env: gitEnv(), encoding: 'buffer', maxBuffer: opts.maxBuffer ?? 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const e = err as Error & { code?: number | string };
        reject(Object.assign(new Error(`git ${args[0]}: ${stderr.toString().trim() || e.message}`), { exit: e.code, stderr: stderr.toString() }) as GitError);
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
