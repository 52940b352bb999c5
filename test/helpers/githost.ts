// Test helpers for the code-hosting server: a server on a loopback port in a temp
// state dir, real gpg with its own GNUPGHOME, real git with no user configuration.
import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GithostDb, GithostServer, createToken, createUser, githostPaths } from '../../src/githost/server/index.js';

export interface Started {
  server: GithostServer;
  url: string;
  stateDir: string;
  adminToken: string;
  close(): Promise<void>;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `strait-${prefix}-`));
}

/** Create the first admin as the admin command does (directly in the database). */
export async function seedAdmin(stateDir: string, username = 'gitea_admin', password = 'admin-pass-1', email = 'admin@example.com'): Promise<string> {
  const p = githostPaths(stateDir);
  mkdirSync(p.root, { recursive: true });
  const db = new GithostDb(p.db);
  try {
    const u = await createUser(db, { username, password, email, admin: true });
    return createToken(db, u.id, 'seed', ['all'])?.token as string;
  } finally {
    db.close();
  }
}

export async function startGithost(settings: Record<string, unknown> = {}, stateDir = tempDir('githost')): Promise<Started> {
  const adminToken = await seedAdmin(stateDir).catch(() => '');
  const server = new GithostServer({ stateDir, settings: { port: 0, ...settings } });
  const url = await server.listen();
  return {
    server,
    url,
    stateDir,
    adminToken,
    async close() {
      await server.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** A parsed JSON response body: tests read fields of it freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonBody = any;

export async function api(
  url: string,
  method: string,
  path: string,
  opts: { token?: string; basic?: [string, string]; body?: unknown; raw?: string } = {},
): Promise<{ status: number; body: JsonBody; headers: Headers }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.token) headers['Authorization'] = `token ${opts.token}`;
  if (opts.basic) headers['Authorization'] = `Basic ${Buffer.from(`${opts.basic[0]}:${opts.basic[1]}`).toString('base64')}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** An environment for real git and gpg that ignores the machine's configuration. */
export function toolEnv(home: string, gnupg?: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    LANG: 'C',
    ...(gnupg ? { GNUPGHOME: gnupg } : {}),
  };
}

export function run(cmd: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; input?: string }): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env, encoding: 'utf8', input: opts.input, maxBuffer: 64 * 1024 * 1024 });
}

export function ok(cmd: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; input?: string }): string {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** A gpg home with one signing key (ed25519, no passphrase). */
export class Gpg {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;

  constructor(readonly root: string) {
    this.home = join(root, 'gnupg');
    mkdirSync(this.home, { mode: 0o700, recursive: true });
    this.env = toolEnv(root, this.home);
  }

  /** Make a key for "Name <email>"; returns its 16-hex key ID. */
  newKey(name: string, email: string, expire = 'never'): string {
    ok('gpg', ['--batch', '--passphrase', '', '--quick-gen-key', `${name} <${email}>`, 'ed25519', 'sign', expire], { env: this.env });
    const out = ok('gpg', ['--list-keys', '--with-colons', email], { env: this.env });
    const ids = [...out.matchAll(/^pub:[^:]*:[^:]*:[^:]*:([0-9A-F]{16}):/gm)].map((m) => m[1] as string);
    return ids[ids.length - 1] as string;
  }

  armor(keyID: string): string {
    return ok('gpg', ['--armor', '--export', keyID], { env: this.env });
  }

  close(): void {
    spawnSync('gpgconf', ['--kill', 'gpg-agent'], { env: this.env });
  }
}

/** A work tree whose commits are signed with `keyID` (git commit -S). */
export function gitWorkTree(
  root: string,
  env: NodeJS.ProcessEnv,
  ident: { name: string; email: string; keyID?: string },
): { dir: string; git: (...args: string[]) => string; tryGit: (...args: string[]) => SpawnSyncReturns<string> } {
  const dir = join(root, `wt-${Math.random().toString(36).slice(2)}`);
  execFileSync('git', ['init', '-q', '-b', 'main', dir], { env });
  const git = (...args: string[]) => ok('git', args, { cwd: dir, env });
  const tryGit = (...args: string[]) => run('git', args, { cwd: dir, env });
  git('config', 'user.name', ident.name);
  git('config', 'user.email', ident.email);
  if (ident.keyID) git('config', 'user.signingkey', ident.keyID);
  return { dir, git, tryGit };
}

export function authURL(base: string, user: string, password: string, path: string): string {
  const u = new URL(path, base);
  u.username = user;
  u.password = password;
  return u.toString();
}

/** Run a program without blocking the event loop (needed when it talks to a server in this process). */
export function runAsync(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}
