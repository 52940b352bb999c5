// One world per state dir: `strait up` locks the state dir (flock on world.lock, shared with
// the world's processes) before it reads or writes anything there. Two started at the same
// moment: one runs, the other is refused at once naming the pid that holds the lock, and
// the running world's store credentials and traffic are untouched. A lock left by a killed
// world is taken over, and said so.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_WORLD } from '../../src/world/world-file/index.js';
import { BIN, strait, waitGone, worldPids } from '../helpers/world.js';

/** the default world without tunnels and githost: quicker to boot */
function coreWorld(dir: string): string {
  const file = join(dir, 'core-world.json');
  writeFileSync(file, JSON.stringify({ ...DEFAULT_WORLD, tunnels: false, githost: false }));
  return file;
}

function up(args: string[]): Promise<{ code: number; out: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, 'up', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.on('close', (code) => done({ code: code ?? 1, out, ms: performance.now() - t0 }));
  });
}

const record = (stateDir: string): { pid: number; supervisorPid: number } => JSON.parse(readFileSync(join(stateDir, 'world.json'), 'utf8'));

test('two `strait up` at the same moment on one state dir: one runs, the other is refused naming the holder', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-lock-'));
  const files = mkdtempSync(join(tmpdir(), 'strait-lock-files-'));
  const world = ['--world', coreWorld(files), '--state-dir', stateDir];
  try {
    const [a, b] = await Promise.all([up(['--detach', ...world]), up(['--detach', ...world])]);
    const runs = [a, b].filter((r) => r.code === 0);
    const refused = [a, b].filter((r) => r.code !== 0);
    assert.equal(runs.length, 1, `exactly one runs:\n${a.out}\n---\n${b.out}`);
    assert.equal(refused.length, 1);
    const rec = record(stateDir);
    const no = refused[0] as { code: number; out: string; ms: number };
    assert.equal(no.code, 4, no.out);
    assert.match(no.out, new RegExp(`STRAIT_ERR_WORLD_RUNNING: .*\\(pid ${rec.pid} holds its lock`));
    const token = readFileSync(join(stateDir, 'store.token'), 'utf8');
    const sock = statSync(join(stateDir, 'store.sock')).ino;
    // every process of the running world, before the refused starts: none of them is killed or replaced
    const processes = worldPids(rec.supervisorPid).sort();

    // refused at once (in about the time the CLI takes to print the status), also a
    // foreground one, with nothing touched
    const t0 = performance.now();
    assert.equal(strait(['status', '--state-dir', stateDir]).status, 0);
    const cliMs = performance.now() - t0;
    const again = await up(world);
    assert.equal(again.code, 4, again.out);
    assert.match(again.out, new RegExp(`pid ${rec.pid} holds its lock`));
    assert.ok(again.ms < 2 * cliMs + 3000, `refused at once (${Math.round(again.ms)} ms; the CLI's status took ${Math.round(cliMs)} ms)`);
    assert.equal(readFileSync(join(stateDir, 'store.token'), 'utf8'), token, 'store.token intact');
    assert.equal(statSync(join(stateDir, 'store.sock')).ino, sock, 'store.sock intact');
    assert.deepEqual(worldPids(rec.supervisorPid).sort(), processes, 'no process of the running world was killed or replaced');

    // the running world still answers: its store (token + socket) and real traffic
    const pods = strait(['get', 'pods', '-A', '--cluster', 'cluster-a', '--state-dir', stateDir]);
    assert.equal(pods.status, 0, pods.stderr);
    const curl = strait([
      'exec',
      '--state-dir',
      stateDir,
      'cluster-a/default/client',
      '--',
      'curl',
      '-s',
      '-m',
      '5',
      'http://echo.default.svc.cluster.local:8080/hello',
    ]);
    assert.equal(curl.status, 0, curl.stderr);
    assert.match(curl.stdout, /hello/);
    // the program's options without `--`: a hint, not commander's bare "unknown option"
    const noDashes = strait(['exec', '--state-dir', stateDir, 'cluster-a/default/client', 'curl', '-s', 'http://echo:8080/']);
    assert.equal(noDashes.status, 2);
    assert.match(
      noDashes.stderr,
      /STRAIT_ERR_USAGE: "-s" is an option of the program, not of strait exec: put the program after --, as in 'strait exec cluster-a\/default\/client -- curl -s http:\/\/echo:8080\/'/,
    );
    // a program in a pod has its own sessions (strait login there never moves the host's current context)
    const cfg = strait(['exec', '--state-dir', stateDir, 'cluster-a/default/client', '--', 'sh', '-c', 'echo "$STRAIT_CONFIG_DIR"']);
    assert.equal(cfg.stdout.trim(), join(stateDir, 'pod-config', 'cluster-a', 'default', 'client'));

    // killed (SIGKILL to every process of the world): the kernel drops the lock, the next
    // `strait up` takes it over and says whose it was
    const pids = [rec.pid, ...worldPids(rec.supervisorPid)];
    for (const p of pids) spawnSync('kill', ['-9', String(p)]);
    assert.deepEqual(await waitGone(pids), []);
    const next = await up(['--detach', ...world]);
    assert.equal(next.code, 0, next.out);
    assert.match(next.out, new RegExp(`took over the lock of state dir .* from pid ${rec.pid}, whose world ended without stopping`));
    assert.equal(strait(['down', '--state-dir', stateDir]).status, 0);
    // a clean stop leaves nothing to take over
    const last = await up(['--detach', ...world]);
    assert.equal(last.code, 0, last.out);
    assert.doesNotMatch(last.out, /took over/);
    assert.equal(strait(['down', '--state-dir', stateDir]).status, 0);
    assert.ok(!existsSync(join(stateDir, 'store.sock')), 'a stopped world leaves no store.sock behind');
  } finally {
    strait(['down', '--state-dir', stateDir]);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
});
