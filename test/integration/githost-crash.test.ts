// Crash safety (docs/githost.md): kill -9 of the code-hosting server during a push or a migration leaves no
// corrupt repository: git fsck passes, refs are all-or-nothing, leftovers are swept
// at the next start and the same operation then succeeds.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { api, authURL, gitWorkTree, ok, run, runAsync, seedAdmin, tempDir, toolEnv } from '../helpers/githost.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Start githost as its own process (the daemon entry) in its own process group. */
function startDaemon(stateDir: string, settings: Record<string, unknown> = {}): Promise<{ child: ChildProcess; url: string }> {
  const config = join(stateDir, 'githost.json');
  writeFileSync(config, JSON.stringify(settings));
  const child = spawn(process.execPath, [join(root, 'dist', 'daemon', 'githost', 'main.js'), '--port', '0', '--state-dir', stateDir, '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /githost listening on (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1] as string });
    });
    child.on('exit', (code) => reject(new Error(`githost exited ${code}: ${err}`)));
  });
}

function killNow(child: ChildProcess, group: boolean): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    if (group && child.pid) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  });
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return cond();
}

function hasIncoming(repoDir: string): boolean {
  try {
    return readdirSync(join(repoDir, 'objects')).some((f) => f.startsWith('tmp_objdir-incoming-') || f.startsWith('incoming-'));
  } catch {
    return false;
  }
}

test('kill -9 during a push and during a migration leaves no corrupt repository', async (t) => {
  const stateDir = tempDir('githost-crash');
  const env = toolEnv(stateDir);
  await seedAdmin(stateDir);
  let d = await startDaemon(stateDir, { allowLocalNetworks: true });
  const made = await api(d.url, 'POST', '/api/v1/user/repos', { basic: ['gitea_admin', 'admin-pass-1'], body: { name: 'big' } });
  assert.equal(made.status, 201);
  const repoDir = join(stateDir, 'githost', 'repos', 'gitea_admin', 'big.git');

  // a small first commit that lands, then a large incompressible one to interrupt
  const wt = gitWorkTree(stateDir, env, { name: 'Admin', email: 'admin@example.com' });
  ok('sh', ['-c', 'echo base > base && git add base && git commit -q -m base'], { cwd: wt.dir, env });
  const baseSha = wt.git('rev-parse', 'HEAD').trim();
  let p = await runAsync('git', ['push', '-q', authURL(d.url, 'gitea_admin', 'admin-pass-1', '/gitea_admin/big.git'), 'main'], { cwd: wt.dir, env });
  assert.equal(p.status, 0, p.stderr);
  for (let i = 0; i < 4; i++) writeFileSync(join(wt.dir, `blob${i}`), randomBytes(4 * 1024 * 1024));
  wt.git('add', '.');
  wt.git('commit', '-q', '-m', 'large');
  const bigSha = wt.git('rev-parse', 'HEAD').trim();

  const t0 = Date.now();
  const mark = (what: string) => {
    t.diagnostic(`${what} at ${Date.now() - t0} ms`);
  };
  const pushing = runAsync('git', ['push', '-q', authURL(d.url, 'gitea_admin', 'admin-pass-1', '/gitea_admin/big.git'), 'main'], { cwd: wt.dir, env });
  const caught = await waitFor(() => hasIncoming(repoDir), 20_000);
  await killNow(d.child, false); // only the server: git http-backend is orphaned mid-stream
  mark('killed during push');
  const pushed = await pushing;
  mark('push client ended');
  assert.notEqual(pushed.status, 0, 'the push was cut off');
  await new Promise((r) => setTimeout(r, 300));

  d = await startDaemon(stateDir, { allowLocalNetworks: true });
  mark('restarted');
  assert.equal(hasIncoming(repoDir), false, 'quarantine leftovers are swept at start');
  const fsck = run('git', ['fsck', '--strict', '--no-dangling'], { cwd: repoDir, env });
  assert.equal(fsck.status, 0, fsck.stderr);
  const main = ok('git', ['rev-parse', 'refs/heads/main'], { cwd: repoDir, env }).trim();
  assert.ok(main === baseSha || main === bigSha, `main is one of the two commits (caught mid-push: ${caught})`);
  p = await runAsync('git', ['push', '-q', authURL(d.url, 'gitea_admin', 'admin-pass-1', '/gitea_admin/big.git'), 'main'], { cwd: wt.dir, env });
  assert.equal(p.status, 0, p.stderr);
  assert.equal(ok('git', ['rev-parse', 'refs/heads/main'], { cwd: repoDir, env }).trim(), bigSha);

  // migration: kill the whole server (and its git clone) while the clone runs
  const migrating = api(d.url, 'POST', '/api/v1/repos/migrate', {
    basic: ['gitea_admin', 'admin-pass-1'],
    body: { clone_addr: `${d.url}/gitea_admin/big.git`, repo_name: 'copy', uid: 1 },
  }).catch((e: unknown) => e);
  const tmp = join(stateDir, 'githost', 'tmp');
  await waitFor(() => readdirSync(tmp).some((f) => f.startsWith('build-')), 20_000);
  mark('migrating');
  await killNow(d.child, true);
  await migrating;
  mark('killed during migrate');
  d = await startDaemon(stateDir, { allowLocalNetworks: true });
  assert.deepEqual(readdirSync(tmp), [], 'unfinished builds are removed at start');
  const copyDir = join(stateDir, 'githost', 'repos', 'gitea_admin', 'copy.git');
  const got = await api(d.url, 'GET', '/api/v1/repos/gitea_admin/copy', { basic: ['gitea_admin', 'admin-pass-1'] });
  if (got.status === 200)
    ok('git', ['fsck', '--strict'], { cwd: copyDir, env }); // it had finished: then it is whole
  else assert.equal(existsSync(copyDir), false, 'no repository directory without a database row');
  const again = await api(d.url, 'POST', '/api/v1/repos/migrate', {
    basic: ['gitea_admin', 'admin-pass-1'],
    body: { clone_addr: `${d.url}/gitea_admin/big.git`, repo_name: 'copy2', uid: 1 },
  });
  assert.equal(again.status, 201, JSON.stringify(again.body));
  ok('git', ['fsck', '--strict'], { cwd: join(stateDir, 'githost', 'repos', 'gitea_admin', 'copy2.git'), env });
  mark('migrated again');
  await killNow(d.child, true);
});
