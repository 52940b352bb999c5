// World lifetime (docs/world.md): the world stops when its parent asks, whoever the parent is. `npm start`
// under a supervisor that signals npm's pid alone: npm -> sh -c '… && exec node bin/strait.js
// up' -> the world; SIGTERM to npm, kill -9 of npm, and a shell that does not exec (strait up
// orphaned when the shell dies) all leave no world process, namespace or interface behind.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, hostNetworkState, isWorldLinkName, root, waitGone, worldPids } from './../helpers/world.js';

/** the last command of the real `npm start` (the one that runs the world), on this checkout's bin */
function startCommand(): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const last = (pkg.scripts['start'] ?? '').split('&&').pop()?.trim() ?? '';
  assert.match(last, /node bin\/strait\.js up$/, `npm start ends by running the world: ${pkg.scripts['start']}`);
  return last.replace('bin/strait.js', JSON.stringify(BIN));
}

/** `npm start` in a throw-away package whose start script runs the world as the real one does */
async function npmStart(script: string): Promise<{ npm: ChildProcess; stateDir: string; rec: { pid: number; supervisorPid: number }; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-npm-'));
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'strait-parent-test', private: true, scripts: { start: `${script} --state-dir ${JSON.stringify(stateDir)}` } }),
  );
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: dir,
    stdio: 'ignore',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
  });
  const file = join(stateDir, 'world.json');
  const deadline = Date.now() + 60_000;
  let rec: { pid: number; supervisorPid: number; status: string } | undefined;
  while (Date.now() < deadline && rec?.status !== 'ready') {
    if (existsSync(file)) {
      try {
        rec = JSON.parse(readFileSync(file, 'utf8'));
      } catch {
        /* being written */
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(rec?.status, 'ready', `the world under npm start came up (${readFileSync(join(stateDir, 'logs', 'world.log'), 'utf8').slice(-2000)})`);
  return {
    npm,
    stateDir,
    rec: rec!,
    cleanup: () => {
      for (const pid of [npm.pid, rec?.pid]) {
        try {
          process.kill(pid as number, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function signalAndCheck(script: string, signal: NodeJS.Signals): Promise<void> {
  const before = hostNetworkState();
  const w = await npmStart(script);
  try {
    const pids = worldPids(w.rec.supervisorPid);
    assert.ok(pids.length >= 3, `world processes: ${pids}`);
    assert.notEqual(w.rec.pid, w.npm.pid, 'the world runs below npm');
    w.npm.kill(signal);
    assert.deepEqual(await waitGone([w.rec.pid, ...pids], 20_000), [], `no world process survives ${signal} to npm`);
    assert.equal(existsSync(join(w.stateDir, 'world.json')), false, 'world.json is gone');
    const after = hostNetworkState();
    assert.deepEqual(
      after.netns.filter((n) => !before.netns.includes(n)).filter((n) => /^cluster-/.test(n)),
      [],
    );
    assert.deepEqual(after.links.filter((l) => !before.links.includes(l)).filter(isWorldLinkName), []);
  } finally {
    w.cleanup();
  }
}

test('SIGTERM to npm (npm start as package.json has it) stops the world', async () => {
  await signalAndCheck(startCommand(), 'SIGTERM');
});

test('kill -9 of npm: strait up sees its parent die and stops the world', async () => {
  await signalAndCheck(startCommand(), 'SIGKILL');
});

test('SIGTERM to npm whose shell does not exec: the orphaned strait up stops the world', async () => {
  await signalAndCheck(`node -e 0 && node ${JSON.stringify(BIN)} up`, 'SIGTERM');
});
