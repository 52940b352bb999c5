// GitOps in the local world (docs/gitops.md): `strait up` runs the control module of cluster-a; a pod reaches its API at
// http://198.18.0.1:8080, and the admin password is read from the Secret with
// `strait get`, as docs/gitops.md says. And README.md's "Signed GitOps" lines, run as written
// in this world after `strait demo gitops --world` set them up: the Application synced at the
// signed commit, its ConfigMap in cluster-a's store, an unsigned push refused and shown.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { run, type RunResult } from '../../helpers/run.js';
import { waitFor } from '../../helpers/wait.js';
import { BIN, root, strait, upWorld, type TestWorld } from '../../helpers/world.js';

let world: TestWorld;

before(() => {
  world = upWorld();
});
after(() => world?.cleanup());

test('the control module runs in the world and a pod logs in with the password from the Secret', () => {
  assert.ok(
    world.record().components.some((c) => c.name === 'cluster-a.control'),
    JSON.stringify(world.record().components),
  );
  const secret = strait(['get', 'secret', 'argocd-secret', '-n', 'argocd', '--cluster', 'cluster-a', '-o', 'json', '--state-dir', world.stateDir]);
  assert.equal(secret.status, 0, secret.stderr);
  const password = Buffer.from(JSON.parse(secret.stdout).data['admin.password'], 'base64').toString();
  assert.match(password, /^[\w-]{16}$/);
  const bad = world.exec('cluster-a/default/client', [
    'curl',
    '-s',
    '-m',
    '5',
    '-X',
    'POST',
    'http://198.18.0.1:8080/api/v1/session',
    '-d',
    '{"username":"admin","password":"x"}',
  ]);
  assert.equal(bad.status, 0, bad.stderr);
  assert.equal(JSON.parse(bad.stdout).message, 'Invalid username or password');
  const good = world.exec('cluster-a/default/client', [
    'curl',
    '-s',
    '-m',
    '5',
    '-X',
    'POST',
    'http://198.18.0.1:8080/api/v1/session',
    '-d',
    JSON.stringify({ username: 'admin', password }),
  ]);
  assert.match(JSON.parse(good.stdout).token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
});

/** The sh block of README.md's "Signed GitOps" that starts with the setup, line by line (comments kept: bash drops them). */
function readmeGitopsLines(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /```sh\n(strait demo gitops --world[^\n]*\n[\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'README.md has an sh block starting with strait demo gitops --world');
  return block.split('\n').filter((l) => l.trim() !== '');
}

test("strait demo gitops --world, then README.md's lines as written: Synced at the signed commit, the ConfigMap in the store; an unsigned push refused and shown", async (t) => {
  // a user whose default state dir (~/.local/state/strait) is this world, in a fresh working directory
  const home = mkdtempSync(join(tmpdir(), 'strait-readme-home-'));
  const cwd = mkdtempSync(join(tmpdir(), 'strait-readme-cwd-'));
  mkdirSync(join(home, '.local', 'state'), { recursive: true });
  symlinkSync(world.stateDir, join(home, '.local', 'state', 'strait'));
  mkdirSync(join(cwd, '.bin'));
  symlinkSync(BIN, join(cwd, '.bin', 'strait'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    PATH: `${join(cwd, '.bin')}:${process.env['PATH'] ?? ''}`,
    XDG_CONFIG_HOME: join(cwd, '.config'),
    GIT_CONFIG_NOSYSTEM: '1',
    STRAIT_LOG_LEVEL: 'warn',
  };
  delete env['STRAIT_STATE_DIR'];
  delete env['XDG_STATE_HOME'];
  const sh = (line: string): Promise<RunResult> => run('bash', ['-c', line], { env, cwd });
  const gnupg = join(world.stateDir, 'gitops-demo', 'gnupg');
  try {
    // the docs' 127.0.0.1:8080 is the control API on the host, or the port `strait status` names
    const control = new URL(world.record().control ?? 'http://127.0.0.1:8080').host;
    const lines = readmeGitopsLines().map((l) => l.replaceAll('127.0.0.1:8080', control));
    const out: Record<string, RunResult> = {};
    let setupMs = 0;
    for (const line of lines) {
      const assign = /^(\w+)=/.exec(line)?.[1];
      const t0 = Date.now();
      const r = await sh(assign ? `${line}\nprintf %s "$${assign}"` : line);
      if (line.startsWith('strait demo')) setupMs = Date.now() - t0;
      assert.equal(r.status, 0, `${line}: exit ${r.status}\n${r.stdout}${r.stderr}`);
      if (assign) env[assign] = r.stdout;
      out[line] = r;
    }
    const [setupLine, ...readmeNext] = lines as [string, ...string[]];
    const setup = out[setupLine]?.stdout ?? '';
    t.diagnostic(`strait demo gitops --world took ${setupMs} ms`);
    // it printed the README's next lines, exactly
    const printed = /Next, the lines of README\.md[^\n]*\n((?: {2}\S[^\n]*\n)+)/.exec(setup)?.[1] ?? '';
    assert.deepEqual(
      printed
        .trimEnd()
        .split('\n')
        .map((l) => l.trim()),
      readmeNext.map((l) => l.replace(/\s+# .*$/, '')),
      setup,
    );
    assert.match(setup, /\[6\] the control module says: Sync Error to [0-9a-f]{12} \(.*not imported/, setup);
    const key = /gpg made key ([0-9A-F]{16}) for Alice <alice@example.com>/.exec(setup)?.[1];
    assert.ok(key, setup);
    assert.match(
      Object.values(out)
        .map((r) => r.stdout)
        .join(''),
      /Created 1 key\(s\) from input file\./,
    );
    assert.match(
      Object.values(out)
        .map((r) => r.stdout)
        .join(''),
      new RegExp(`${key}\\s+ED25519\\s+Alice <alice@example.com>`),
    );

    // Synced at the signed commit, which the real gpg verifies with alice's key
    const work = join(world.stateDir, 'gitops-demo', 'guestbook');
    const git = (...args: string[]): Promise<RunResult> => run('git', args, { env: { ...env, GNUPGHOME: gnupg }, cwd: work });
    const signed = (await git('rev-parse', 'HEAD')).stdout.trim();
    const verified = await git('verify-commit', '--raw', signed);
    assert.equal(verified.status, 0, verified.stderr);
    assert.match(verified.stderr, /GOODSIG/);
    type App = { status: { sync: { status: string; revision: string }; signature?: { status: string; keyID?: string } } };
    const appGet = async (): Promise<App> => JSON.parse((await sh('strait app get guestbook -o json')).stdout) as App;
    const synced = await appGet();
    assert.equal(synced.status.sync.status, 'Synced');
    assert.equal(synced.status.sync.revision, signed);
    assert.equal(synced.status.signature?.status, 'valid');
    assert.equal(synced.status.signature?.keyID, key);
    // the manifest's object in the world's store (cluster-a)
    const cm = async (): Promise<string | undefined> =>
      (JSON.parse((await sh('strait get configmap guestbook-ui -n guestbook --cluster cluster-a -o json')).stdout) as { data?: { release?: string } }).data
        ?.release;
    assert.equal(await cm(), '1');

    // an unsigned push from the working copy, as the demo says: refused, and the refused revision is the one shown
    writeFileSync(join(work, 'guestbook', 'ui.yaml'), readFileSync(join(work, 'guestbook', 'ui.yaml'), 'utf8').replace('"1"', '"2"'));
    assert.equal((await git('commit', '-qam', 'unsigned')).status, 0);
    const unsigned = (await git('rev-parse', 'HEAD')).stdout.trim();
    const pushed = await git('push', '-q');
    assert.equal(pushed.status, 0, pushed.stderr);
    const refused = await waitFor(
      async () => {
        const a = await appGet();
        return a.status.sync.revision === unsigned ? a : undefined;
      },
      60_000,
      'the unsigned revision compared',
      200,
    );
    assert.equal(refused.status.sync.status, 'Sync Error');
    assert.equal(refused.status.signature?.status, 'unsigned');
    const text = (await sh('strait app get guestbook')).stdout;
    assert.match(text, new RegExp(`Sync Status:\\s+Sync Error to ${unsigned} \\(refused: unsigned\\); last good: ${signed}`), text);
    const list = (await sh('strait app list')).stdout;
    assert.match(list, new RegExp(`guestbook\\s+signed\\s+Sync Error\\s+${unsigned.slice(0, 12)}\\s+${signed.slice(0, 12)}\\s+unsigned`), list);
    assert.equal(await cm(), '1', 'nothing of the unsigned revision applied');

    // a second setup changes nothing and names what is there
    const keyBefore = readFileSync(join(cwd, 'alice.asc'), 'utf8');
    const again = await sh('strait demo gitops --world');
    assert.equal(again.status, 4, again.stdout + again.stderr);
    assert.match(again.stderr, /STRAIT_ERR_GITOPS_DEMO_EXISTS/);
    for (const what of [
      'githost user "alice"',
      'Application argocd/guestbook',
      'AppProject argocd/signed',
      `directory ${join(home, '.local', 'state', 'strait', 'gitops-demo')}`,
      'file alice.asc',
    ])
      assert.ok(again.stderr.includes(what), `${what} in: ${again.stderr}`);
    assert.equal(readFileSync(join(cwd, 'alice.asc'), 'utf8'), keyBefore);
  } finally {
    await run('gpgconf', ['--kill', 'all'], { env: { ...env, GNUPGHOME: gnupg } }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
});
