// Running the real git: argument arrays only (no shell), a clean environment (no
// user or system config, no prompts), bounded output and time. Every git the server
// runs (API reads, migrations, git http-backend) gets this environment, which also
// turns off replace objects and grafts: a pushed refs/replace/<sha> must never change
// what the commit API reads and verifies under <sha>.
import { spawn } from 'node:child_process';
import { E } from '../../base/errors/index.js';

export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** A path that cannot exist (/dev/null is not a directory): git finds no graft file there, silently. */
const NO_GRAFTS = '/dev/null/strait-no-grafts';

/** Environment for every git the server runs: no system/global config, no prompts, objects read as stored. */
export function gitEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_GRAFT_FILE: NO_GRAFTS,
    ...extra,
  };
}

export function runGit(
  args: string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number; maxOutput?: number; input?: Buffer },
): Promise<GitResult> {
  const maxOutput = opts.maxOutput ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outLen = 0;
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs) {
      timer = setTimeout(() => {
        err += `\nkilled after ${opts.timeoutMs} ms`;
        child.kill('SIGKILL');
      }, opts.timeoutMs);
    }
    child.stdout.on('data', (d: Buffer) => {
      outLen += d.length;
      if (outLen > maxOutput) {
        child.kill('SIGKILL');
        return;
      }
      out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 65536) err += d.toString('utf8');
    });
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(E.systemTool(`git ${args[0] ?? ''}`, 'spawn', e.message));
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input);
  });
}

/** Run git and return stdout; a non-zero exit throws STRAIT_ERR_SYSTEM_TOOL with git's stderr. */
export async function git(args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number; input?: Buffer }): Promise<Buffer> {
  const r = await runGit(args, opts);
  if (r.code !== 0) throw E.systemTool(`git ${args.join(' ')}`, r.code ?? 'killed', r.stderr);
  return r.stdout;
}
