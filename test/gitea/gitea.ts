// Test tooling only: a real Gitea (the oracle githost is compared with) and the Gitea
// Go SDK driver, both built by test/gitea/build-gitea.sh from the Go module proxy and
// cached under ~/.cache/strait/gitea/<version>/. startGitea() runs one on loopback in a
// temp dir (sqlite, no SSH, no mail, offline), with a site admin made by Gitea's own
// `gitea admin user create`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freeTcpPort } from '../helpers/free-port.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const buildScript = join(root, 'test', 'gitea', 'build-gitea.sh');

export const GITEA_ADMIN = { user: 'gitea_admin', password: 'admin-pass-1', email: 'admin@example.com' };

export function giteaVersion(): string {
  const mod = readFileSync(join(root, 'test', 'gitea', 'server', 'go.mod'), 'utf8');
  return /^require code\.gitea\.io\/gitea (\S+)/m.exec(mod)?.[1] ?? 'unknown';
}

export function cacheDir(): string {
  return join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'strait', 'gitea', giteaVersion());
}

function runBuild(args: string[]): Promise<{ status: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [buildScript, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.on('error', () => resolve({ status: 1, stdout }));
    child.on('close', (code) => resolve({ status: code ?? 1, stdout }));
  });
}

export interface Binaries {
  gitea: string;
  sdk: string;
  staticRoot: string;
}

const ensured = new Map<string, Promise<Binaries | { skip: string }>>();

/**
 * Build (or find in the cache) what the tests need: `sdk` only, or the Gitea server as
 * well. Skips (with the reason) only when Go is missing and the cache is cold; under
 * CI=true a missing binary is a failure.
 */
export function ensureGiteaTools(what: 'sdk' | 'all'): Promise<Binaries | { skip: string }> {
  let p = ensured.get(what);
  if (!p) {
    p = ensureTools(what);
    ensured.set(what, p);
  }
  return p;
}

async function ensureTools(what: 'sdk' | 'all'): Promise<Binaries | { skip: string }> {
  const cache = cacheDir();
  const gitea = join(cache, 'gitea');
  const sdk = join(cache, 'gitea-sdk-test');
  const fail = (why: string): { skip: string } => {
    if (process.env['CI'] === 'true') throw new Error(`CI=true: the Gitea tests must run, but ${why}`);
    return { skip: `${why}; run test/gitea/build-gitea.sh (about 3 minutes of Go build the first time)` };
  };
  const hasGo = spawnSync('go', ['version']).status === 0;
  if (!hasGo && (!existsSync(sdk) || (what === 'all' && !existsSync(gitea)))) return fail("no Go toolchain ('go') and no cached Gitea/SDK build");
  if (hasGo) {
    // a no-op when the cache is warm; rebuilds when go.mod/go.sum changed
    const r = await runBuild(what === 'sdk' ? ['--sdk'] : []);
    if (r.status !== 0) return fail(`test/gitea/build-gitea.sh failed with status ${r.status}`);
  }
  const staticRoot = hasGo
    ? spawnSync('bash', [buildScript, '--static'], { encoding: 'utf8' }).stdout.trim()
    : join(homedir(), 'go', 'pkg', 'mod', 'code.gitea.io', `gitea@${giteaVersion()}`);
  return { gitea, sdk, staticRoot };
}

export interface RunningGitea {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Start a Gitea on a loopback port in a temp dir, with GITEA_ADMIN as its site admin. */
export async function startGitea(bin: Binaries): Promise<RunningGitea> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-gitea-'));
  const port = await freeTcpPort();
  const url = `http://127.0.0.1:${port}`;
  const ini = join(dir, 'app.ini');
  const secret = () => randomBytes(32).toString('hex');
  writeFileSync(
    ini,
    [
      'APP_NAME = strait oracle',
      `RUN_USER = ${userInfo().username}`,
      'RUN_MODE = prod',
      `WORK_PATH = ${dir}`,
      // the tests run as root in containers; Gitea refuses that unless told
      'I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true',
      '[server]',
      'PROTOCOL = http',
      'HTTP_ADDR = 127.0.0.1',
      `HTTP_PORT = ${port}`,
      `ROOT_URL = ${url}/`,
      'DISABLE_SSH = true',
      'START_SSH_SERVER = false',
      'OFFLINE_MODE = true',
      'LFS_START_SERVER = false',
      `APP_DATA_PATH = ${join(dir, 'data')}`,
      // locale and template files come from the module folder (the binary has no bindata)
      `STATIC_ROOT_PATH = ${bin.staticRoot}`,
      '[database]',
      'DB_TYPE = sqlite3',
      `PATH = ${join(dir, 'gitea.db')}`,
      '[repository]',
      `ROOT = ${join(dir, 'repos')}`,
      '[security]',
      'INSTALL_LOCK = true',
      `SECRET_KEY = ${secret()}`,
      `INTERNAL_TOKEN = ${secret()}`,
      '[oauth2]',
      `JWT_SECRET = ${randomBytes(32).toString('base64url')}`,
      '[service]',
      'DISABLE_REGISTRATION = true',
      'DEFAULT_KEEP_EMAIL_PRIVATE = false',
      '[migrations]',
      // both servers migrate from loopback in the tests (githost: allowLocalNetworks)
      'ALLOW_LOCALNETWORKS = true',
      '[mailer]',
      'ENABLED = false',
      '[session]',
      'PROVIDER = memory',
      '[cache]',
      'ADAPTER = memory',
      '[queue]',
      'TYPE = channel',
      '[indexer]',
      'ISSUE_INDEXER_TYPE = db',
      'REPO_INDEXER_ENABLED = false',
      '[cron]',
      'ENABLED = false',
      '[log]',
      'MODE = file',
      'LEVEL = Warn',
      `ROOT_PATH = ${join(dir, 'log')}`,
      '',
    ].join('\n'),
  );
  const env = { ...process.env, HOME: dir, GITEA_WORK_DIR: dir, USER: userInfo().username };
  const migrate = spawnSync(bin.gitea, ['migrate', '-c', ini], { env, encoding: 'utf8', cwd: dir });
  if (migrate.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`gitea migrate failed (${migrate.status}): ${migrate.stderr}${migrate.stdout}`);
  }
  const admin = spawnSync(
    bin.gitea,
    [
      'admin',
      'user',
      'create',
      '-c',
      ini,
      '--admin',
      '--username',
      GITEA_ADMIN.user,
      '--password',
      GITEA_ADMIN.password,
      '--email',
      GITEA_ADMIN.email,
      '--must-change-password=false',
    ],
    { env, encoding: 'utf8', cwd: dir },
  );
  if (admin.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`gitea admin user create failed (${admin.status}): ${admin.stderr}${admin.stdout}`);
  }
  const child: ChildProcess = spawn(bin.gitea, ['web', '-c', ini], { env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 20000) stderr += d;
  });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      const done = new Promise((r) => child.once('exit', r));
      await Promise.race([done, sleep(10_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`gitea web exited (${child.exitCode}): ${stderr.slice(-4000)}`);
    }
    try {
      const r = await fetch(`${url}/api/v1/version`);
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`gitea web did not answer on ${url} within 120 s: ${stderr.slice(-4000)}`);
    }
    await sleep(250);
  }
  return { url, dir, stop };
}
