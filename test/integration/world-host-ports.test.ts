// Addresses that stay: a restarted world binds the host ports it had (control API, githost);
// when one is taken it says where the server is now, a client still pointed at the old
// address is told where to go (naming `strait status`), and an Application whose repoURL is
// the first run's clone URL keeps following pushes (the control module's git rewrites every
// host URL the code-hosting server has had; docs/world.md).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_WORLD } from '../../src/world/world-file/index.js';
import { strait, upWorld } from '../helpers/world.js';
import { waitFor } from '../helpers/wait.js';

const occupy = (port: number): Promise<Server> =>
  new Promise((done, fail) => {
    const s = createServer((c) => c.destroy());
    s.once('error', fail);
    s.listen(port, '127.0.0.1', () => done(s));
  });

test('a restart whose ports are taken: the new addresses are said, old clients are pointed there, old repoURLs keep syncing', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-ports-'));
  const files = mkdtempSync(join(tmpdir(), 'strait-ports-files-'));
  const worldFile = join(files, 'world.json');
  writeFileSync(worldFile, JSON.stringify({ ...DEFAULT_WORLD, tunnels: false }));
  const env = { ...process.env, STRAIT_CONFIG_DIR: join(files, 'config'), STRAIT_STATE_DIR: stateDir, GIT_TERMINAL_PROMPT: '0' };
  const cli = (args: string[], input?: string) =>
    spawnSync(process.execPath, [join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'bin', 'strait.js'), ...args], {
      encoding: 'utf8',
      env,
      input,
      timeout: 60_000,
    });
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: join(files, 'work'), encoding: 'utf8', env });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const held: Server[] = [];
  try {
    const w1 = upWorld(['--world', worldFile], stateDir);
    const rec1 = w1.record() as unknown as { control: string; githost: string };
    const c1 = Number(new URL(rec1.control).port);
    const g1 = Number(new URL(rec1.githost).port);
    // a user, a repository and a commit on the code-hosting server, through its host URL
    const user = cli(['admin', 'user', 'create', '--state-dir', stateDir, '--username', 'alice', '--password', 'alice-pass-1', '--email', 'alice@example.com']);
    assert.equal(user.status, 0, user.stderr);
    const repo = await fetch(`${rec1.githost}/api/v1/user/repos`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('alice:alice-pass-1').toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'app', private: false }),
    });
    assert.equal(repo.status, 201);
    const cloneURL = ((await repo.json()) as { clone_url: string }).clone_url;
    assert.equal(cloneURL, `${rec1.githost}/alice/app.git`);
    spawnSync('mkdir', ['-p', join(files, 'work', 'app')]);
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 'alice@example.com');
    git('config', 'user.name', 'Alice');
    const cm = (v: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ports-app}\ndata: {v: "${v}"}\n`;
    writeFileSync(join(files, 'work', 'app', 'cm.yaml'), cm('1'));
    git('add', '.');
    git('commit', '-q', '-m', 'one');
    const push = (base: string) => git('push', '-q', base.replace('://', '://alice:alice-pass-1@') + '/alice/app.git', 'main');
    push(rec1.githost);
    const appYaml =
      'apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: ports, namespace: argocd}\nspec:\n  sourceRepos: ["*"]\n' +
      '  destinations: [{server: "https://kubernetes.default.svc", namespace: default}]\n---\n' +
      `apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ports-app, namespace: argocd}\nspec:\n  project: ports\n` +
      `  source: {repoURL: "${cloneURL}", path: app, targetRevision: main}\n  destination: {server: "https://kubernetes.default.svc", namespace: default}\n  syncPolicy: {automated: {}}\n`;
    const ap = cli(['apply', '--cluster', 'cluster-a', '-f', '-'], appYaml);
    assert.equal(ap.status, 0, ap.stderr);
    const live = () => {
      const r = cli(['get', 'configmap', 'ports-app', '-n', 'default', '--cluster', 'cluster-a', '-o', 'json']);
      return r.status === 0 ? (JSON.parse(r.stdout) as { data?: { v?: string } }).data?.v : undefined;
    };
    await waitFor(() => live() === '1' || undefined, 60_000, 'the first revision synced');
    const pw = readFileSync(join(stateDir, 'control', 'initial-admin-password'), 'utf8').trim();
    const login = cli(['login', `127.0.0.1:${c1}`, '--plaintext', '--username', 'admin', '--password', pw]);
    assert.equal(login.status, 0, login.stderr);
    assert.equal(w1.down().status, 0);

    // someone else takes both ports while the world is down
    held.push(await occupy(c1), await occupy(g1));
    const w2 = upWorld(['--world', worldFile], stateDir);
    const rec2 = w2.record() as unknown as { control: string; githost: string };
    assert.notEqual(rec2.control, rec1.control);
    assert.notEqual(rec2.githost, rec1.githost);
    assert.match(
      w2.upOutput,
      new RegExp(
        `127\\.0\\.0\\.1:${c1} is taken: the control API is on ${rec2.control.replace('http://', '').replace(/\./g, '\\.')} this time \\(\`strait status\` shows it\\)`,
      ),
    );
    assert.match(w2.upOutput, new RegExp(`127\\.0\\.0\\.1:${g1} is taken: the code-hosting server is on`));
    const status = cli(['status']);
    assert.match(status.stdout, new RegExp(`control API: ${rec2.control.replace(/\./g, '\\.')}`));
    // the old address is held by the program that took it (it resets connections): the
    // client says where the control API is now. (A refused old address says the same: the
    // unit test control-client-hints; here the port is kept held, since a freed 8080 may be
    // taken by another test's world at once.)
    // (asynchronously: the holder lives in this process and must keep answering)
    const old = await new Promise<{ status: number | null; stderr: string }>((done) => {
      const c = spawn(process.execPath, [join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'bin', 'strait.js'), 'app', 'list'], { env });
      let stderr = '';
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('close', (status) => done({ status, stderr }));
    });
    assert.notEqual(old.status, 0);
    assert.match(
      old.stderr,
      new RegExp(
        `connection reset: the local world's control API is now ${rec2.control.replace(/\./g, '\\.')} \\(\`strait status\` shows it\\); log in there: strait login ${new URL(rec2.control).host}`,
      ),
    );
    for (const s of held.splice(0)) await new Promise((r) => s.close(r));

    // the Application still names the first run's clone URL; a push to the new address is followed
    writeFileSync(join(files, 'work', 'app', 'cm.yaml'), cm('2'));
    git('commit', '-q', '-am', 'two');
    push(rec2.githost);
    await waitFor(() => live() === '2' || undefined, 60_000, 'the push followed through the old repoURL');
    assert.equal(w2.down().status, 0);

    // nothing taken: the saved ports come back
    const w3 = upWorld(['--world', worldFile], stateDir);
    const rec3 = w3.record() as unknown as { control: string; githost: string };
    assert.equal(rec3.control, rec2.control);
    assert.equal(rec3.githost, rec2.githost);
    assert.doesNotMatch(w3.upOutput, /is taken/);
    assert.equal(w3.down().status, 0);
  } finally {
    for (const s of held) s.close();
    strait(['down', '--state-dir', stateDir]);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
});
