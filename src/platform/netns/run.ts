// Running the system's network tools (ip, nft, sysctl) with their errors turned into
// STRAIT_ERR_SYSTEM_TOOL, optionally inside a named network namespace.
import { spawn } from 'node:child_process';
import { E } from '../../base/errors/index.js';

export const NETNS_DIR = '/run/netns';

export function netnsPath(name: string): string {
  return `${NETNS_DIR}/${name}`;
}

export interface RunOptions {
  /** written to the program's standard input */
  input?: string;
  timeoutMs?: number;
}

/** Run a program; resolve with its stdout, reject with STRAIT_ERR_SYSTEM_TOOL quoting its stderr. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(E.systemTool([cmd, ...args].join(' '), 'spawn', e.message));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else {
        const where = opts.input ? `${[cmd, ...args].join(' ')} <<< ${opts.input.slice(0, 300)}` : [cmd, ...args].join(' ');
        reject(E.systemTool(where, code ?? String(signal), Buffer.concat(err).toString('utf8')));
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** `ip -batch -` in the world root (netns undefined) or in a named namespace. */
export function ipBatch(lines: string[], netns?: string): Promise<string> {
  if (lines.length === 0) return Promise.resolve('');
  const args = netns ? ['-n', netns, '-batch', '-'] : ['-batch', '-'];
  return run('ip', args, { input: lines.join('\n') + '\n' });
}

/** Run a program with its network namespace switched to the named one (nsenter --net). */
export function inNetns(netns: string, cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  return run('nsenter', [`--net=${netnsPath(netns)}`, '--', cmd, ...args], opts);
}

/** Set net.* sysctls inside a namespace (they are per network namespace). */
export function setSysctls(netns: string | undefined, values: Record<string, string | number>): Promise<string> {
  const args = ['-q', '-w', ...Object.entries(values).map(([k, v]) => `${k}=${v}`)];
  return netns ? inNetns(netns, 'sysctl', args) : run('sysctl', args);
}

/** Load an nftables script (atomically: one transaction) in a namespace. */
export function nftApply(netns: string | undefined, script: string): Promise<string> {
  return netns ? inNetns(netns, 'nft', ['-f', '-'], { input: script }) : run('nft', ['-f', '-'], { input: script });
}
