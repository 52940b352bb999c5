// The one process supervisor (src/platform/process) with real child processes: a crash is
// restarted after the backoff (doubling, capped, started over after a long run), readiness
// comes over IPC, a failed prepare is retried, the log file takes the output, and stop()
// signals only the PID it spawned.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Backoff, backoffDelay } from '../../src/base/backoff/index.js';
import { PROCESS_BACKOFF, SupervisedProcess, type ExitInfo } from '../../src/platform/process/index.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'strait-proc-'));

async function until(pred: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    assert.ok(Date.now() - t0 < ms, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('backoff: doubling from initialMs, capped at maxMs, a success starts over', () => {
  const b = new Backoff({ initialMs: 200, maxMs: 1000 });
  assert.deepEqual([b.fail(), b.fail(), b.fail(), b.fail(), b.fail()], [200, 400, 800, 1000, 1000]);
  assert.equal(b.failures, 5);
  b.reset();
  assert.equal(b.fail(), 200);
  assert.equal(backoffDelay(1000, PROCESS_BACKOFF), 10_000);
});

test('supervised process: a crash is restarted after the backoff (doubling, capped); every run appends to the log file', async () => {
  const dir = tmp();
  const log = join(dir, 'sub', 'crasher.log');
  const exits: ExitInfo[] = [];
  const starts: number[] = [];
  const p = new SupervisedProcess({
    command: ['sh', '-c', 'echo "run $$"; echo "err" >&2; exit 3'],
    logFile: log,
    backoff: { initialMs: 100, maxMs: 300 },
    onStart: () => starts.push(Date.now()),
    onExit: (e) => exits.push(e),
  }).start();
  await until(() => starts.length >= 5, 'five runs');
  await p.stop();
  assert.deepEqual(
    exits.slice(0, 4).map((e) => e.restartInMs),
    [100, 200, 300, 300],
  );
  for (const e of exits.slice(0, 4)) assert.equal(e.code, 3);
  // each restart waited at least its delay
  for (let i = 1; i < 5; i++) {
    const waited = (starts[i] as number) - (starts[i - 1] as number);
    assert.ok(waited >= (exits[i - 1]?.restartInMs as number) - 5, `run ${i} came after ${waited} ms`);
  }
  assert.ok(p.restarts >= 4 && p.restarts <= 5, `restarts ${p.restarts}`);
  // the first four runs ended by themselves (the fifth was stopped): each wrote its lines
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  assert.ok(lines.filter((l) => l.startsWith('run ')).length >= 4, lines.join('|'));
  assert.ok(lines.filter((l) => l === 'err').length >= 4, 'stderr goes to the log too');
  assert.equal(new Set(lines.filter((l) => l.startsWith('run '))).size, lines.filter((l) => l.startsWith('run ')).length, 'each run is a new process');
});

test('supervised process: a run longer than stableAfterMs starts the backoff over', async () => {
  const exits: ExitInfo[] = [];
  const p = new SupervisedProcess({
    command: ['sh', '-c', 'sleep 0.3; exit 1'],
    logFile: join(tmp(), 'steady.log'),
    backoff: { initialMs: 50, maxMs: 1000 },
    stableAfterMs: 200,
    onExit: (e) => exits.push(e),
  }).start();
  await until(() => exits.length >= 3, 'three exits');
  await p.stop();
  assert.deepEqual(
    exits.slice(0, 3).map((e) => e.restartInMs),
    [50, 50, 50],
  );
});

test('supervised process: ready over IPC per run; other messages and sends go through; stopped runs are not restarted', async () => {
  const got: unknown[] = [];
  let readies = 0;
  // ready after the first message, echoes every message, exits on {exit:true}
  const child =
    'let r=false; process.on("message",(m)=>{ if(m.exit) process.exit(1); if(!r){r=true; process.send({type:"ready"});} process.send({type:"echo",m}); });';
  const p: SupervisedProcess = new SupervisedProcess({
    command: [process.execPath, '-e', child],
    logFile: join(tmp(), 'talker.log'),
    ready: 'ipc',
    backoff: { initialMs: 50, maxMs: 100 },
    onStart: () => p.send({ hello: true }),
    onReady: () => readies++,
    onMessage: (m) => got.push(m),
  }).start();
  await until(() => p.ready, 'ready');
  assert.equal(readies, 1);
  await until(() => got.length >= 1, 'the echo of hello');
  assert.deepEqual(got[0], { type: 'echo', m: { hello: true } });
  assert.equal(p.send({ ping: 1 }), true);
  await until(() => got.length >= 2, 'the echo of ping');
  assert.deepEqual(got[1], { type: 'echo', m: { ping: 1 } });
  const first = p.pid;
  p.send({ exit: true });
  await until(() => readies === 2, 'ready again after the restart');
  assert.notEqual(p.pid, first);
  assert.equal(p.restarts, 1);
  const last = p.pid as number;
  await p.stop();
  assert.equal(alive(last), false);
  assert.equal(p.running, false);
  assert.equal(p.send({}), false);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(p.running, false, 'not restarted after stop');
  assert.equal(p.restarts, 1);
});

test('supervised process: a run that never says ready is not ready', async () => {
  const p = new SupervisedProcess({ command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], logFile: join(tmp(), 'mute.log'), ready: 'ipc' }).start();
  await until(() => p.pid !== undefined, 'spawned');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(p.ready, false);
  assert.equal(p.running, true);
  await p.stop();
});

test('supervised process: a prepare that throws counts as a failed start and is retried with the backoff', async () => {
  let calls = 0;
  const retries: number[] = [];
  const p = new SupervisedProcess({
    command: ['sleep', '30'],
    logFile: join(tmp(), 'prep.log'),
    backoff: { initialMs: 30, maxMs: 1000 },
    prepare: () => {
      if (++calls < 3) throw new Error('not yet');
    },
    onPrepareError: (_err, ms) => retries.push(ms),
  }).start();
  await until(() => p.running, 'started after two failed prepares');
  assert.deepEqual(retries, [30, 60]);
  assert.equal(p.restarts, 2);
  await p.stop();
});

test('supervised process: stop signals only the PID it spawned (not its process group, not another supervised process)', async () => {
  const dir = tmp();
  // the child starts a grandchild in its own process group (detached) and prints its PID
  const script = 'const c=require("child_process").spawn("sleep",["30"],{stdio:"ignore"}); console.log("grandchild "+c.pid); setInterval(()=>{},1000);';
  const log = join(dir, 'parent.log');
  const p = new SupervisedProcess({ command: [process.execPath, '-e', script], logFile: log, detached: true }).start();
  const other = new SupervisedProcess({ command: ['sleep', '30'], logFile: join(dir, 'other.log') }).start();
  await until(() => /grandchild \d+/.test(readFileSync(log, 'utf8')), 'the grandchild PID');
  const grandchild = Number(/grandchild (\d+)/.exec(readFileSync(log, 'utf8'))?.[1]);
  const pid = p.pid as number;
  await until(() => other.pid !== undefined, 'the other process');
  const otherPid = other.pid as number;
  assert.ok(alive(pid) && alive(grandchild) && alive(otherPid));
  await p.stop();
  try {
    assert.equal(alive(pid), false, 'the supervised process is gone');
    assert.equal(alive(grandchild), true, 'a process it did not spawn (same group) is not signalled');
    assert.equal(alive(otherPid), true, 'another supervised process is not signalled');
  } finally {
    // the grandchild outlived its parent: the test ends it by its PID
    try {
      process.kill(grandchild, 'SIGKILL');
    } catch {
      /* gone */
    }
    await other.stop();
  }
  assert.equal(alive(otherPid), false);
});

test('supervised process: SIGKILL after the grace period when SIGTERM is ignored', async () => {
  const p = new SupervisedProcess({
    command: [process.execPath, '-e', 'process.on("SIGTERM",()=>{}); process.send({type:"ready"}); setInterval(()=>{},1000);'],
    logFile: join(tmp(), 'stubborn.log'),
    ready: 'ipc',
  }).start();
  await until(() => p.ready, 'ready');
  const pid = p.pid as number;
  const t0 = Date.now();
  await p.stop(300);
  assert.ok(Date.now() - t0 >= 250, 'waited for the grace period');
  assert.equal(alive(pid), false);
});
