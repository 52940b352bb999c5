// The world's process table (docs/world.md, Processes, logs and metrics) restarts crashed components with
// backoff and writes their output to per-component log files.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../src/base/log/index.js';
import { ProcessTable } from '../../src/world/supervisor/index.js';

test('process table: a crashing component is restarted with growing delays; logs go to its file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-pt-'));
  const table = new ProcessTable(dir, silentLogger());
  table.add({ name: 'crasher', command: ['sh', '-c', 'echo "{\\"msg\\":\\"started\\"}"; exit 3'] });
  table.add({
    name: 'steady',
    ready: 'ipc',
    command: [process.execPath, '-e', 'process.send({type:"ready"}); setInterval(() => {}, 1000)'],
  });
  await table.waitReady(5000);
  const t0 = Date.now();
  while (Date.now() - t0 < 1500) await new Promise((r) => setTimeout(r, 50));
  const status = table.status();
  const crasher = status.find((s) => s.name === 'crasher');
  const steady = status.find((s) => s.name === 'steady');
  // 200 + 400 + 800 ms of backoff fit in 1.5 s: 2 or 3 restarts, not dozens
  assert.ok(crasher && crasher.restarts >= 2 && crasher.restarts <= 4, `restarts: ${crasher?.restarts}`);
  assert.equal(steady?.restarts, 0);
  assert.equal(steady?.ready, true);
  assert.ok(steady?.pid);
  const lines = readFileSync(join(dir, 'crasher.log'), 'utf8').trim().split('\n');
  assert.ok(lines.length >= 3);
  for (const l of lines) assert.deepEqual(JSON.parse(l), { msg: 'started' });
  await table.stop();
  assert.equal(table.pids().length, 0);
});

test('process table: waitReady names the components that never became ready', async () => {
  const table = new ProcessTable(mkdtempSync(join(tmpdir(), 'strait-pt-')), silentLogger());
  table.add({ name: 'mute', ready: 'ipc', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] });
  await assert.rejects(table.waitReady(300), /not ready after 300 ms: mute/);
  await table.stop();
});

test('process table: hello reaches the process at every start (its work again after a restart); send and onMessage talk to it', async () => {
  const table = new ProcessTable(mkdtempSync(join(tmpdir(), 'strait-pt-')), silentLogger());
  let hellos = 0;
  const got: unknown[] = [];
  // echoes every message back; ready after the first; exits on {exit:true} (restarted by the table)
  const child =
    'let r=false; process.on("message",(m)=>{ if(m.exit) process.exit(1); if(!r){r=true; process.send({type:"ready"});} process.send({type:"echo",m}); });';
  table.add({ name: 'talker', ready: 'ipc', command: [process.execPath, '-e', child], hello: () => ({ n: ++hellos }), onMessage: (m) => got.push(m) });
  await table.waitReady(5000);
  const until = async (pred: () => boolean): Promise<void> => {
    const t0 = Date.now();
    while (!pred()) {
      assert.ok(Date.now() - t0 < 5000, `timed out; got ${JSON.stringify(got)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await until(() => got.length >= 1);
  assert.deepEqual(got[0], { type: 'echo', m: { n: 1 } });
  assert.equal(table.send('talker', { ping: 1 }), true);
  await until(() => got.length >= 2);
  assert.deepEqual(got[1], { type: 'echo', m: { ping: 1 } });
  table.send('talker', { exit: true });
  await until(() => got.length >= 3); // restarted after 200 ms: hello again, with the next message
  assert.deepEqual(got[2], { type: 'echo', m: { n: 2 } });
  assert.equal(table.send('nobody', {}), false);
  await table.stop();
});
