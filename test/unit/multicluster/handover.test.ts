// Handover (src/multicluster/dataplane/handover): a daemon told to wait takes a port over the
// moment the process holding it lets go; one not told to fails at once with the system's
// error; anything but "held elsewhere" is never waited for.
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Handover, handoverWaitMsFromEnv } from '../../../src/multicluster/dataplane/handover/index.js';

function bindUdp(port = 0): Promise<Socket> {
  const s = createSocket('udp4');
  return new Promise((done, fail) => {
    s.once('error', fail);
    s.bind(port, '127.0.0.1', () => done(s));
  });
}

test('told to wait: the port is taken over as soon as its holder closes it, and said once', async () => {
  const holder = await bindUdp();
  const port = holder.address().port;
  const said: string[] = [];
  const h = new Handover('node agent', { waitMs: 5000, onWaiting: (m) => said.push(m) });
  setTimeout(() => holder.close(), 300);
  const t0 = performance.now();
  const mine = await h.open(`UDP ${port}`, () => bindUdp(port));
  const ms = performance.now() - t0;
  try {
    assert.equal(mine.address().port, port);
    assert.ok(ms >= 250 && ms < 2000, `taken over after the holder let go (${Math.round(ms)} ms)`);
    assert.equal(said.length, 1);
    assert.match(
      said[0] ?? '',
      new RegExp(
        `^UDP ${port} is held by another process on this node \\(the node agent this one replaces, in a rolling update\\): taking the data path over when it stops \\(waiting up to 5 s\\)$`,
      ),
    );
    assert.ok((h.waitedMs ?? 0) >= 250, String(h.waitedMs));
  } finally {
    mine.close();
    h.done();
  }
});

test('a waiting successor says so on the node (an abstract socket): the process it replaces finds it while it waits, never itself, and nobody after done()', async () => {
  // (a name of this test's own: the namespace is this host's)
  const who = `gateway test ${process.pid}`;
  const holder = await bindUdp();
  const port = holder.address().port;
  const old = new Handover(who, { waitMs: 5000 });
  assert.equal(await old.successorWaiting(), false, 'nobody waits yet');
  // a daemon whose predecessor never asks (the node agent) waits without saying so
  const holder2 = await bindUdp();
  const port2 = holder2.address().port;
  const quiet = new Handover(who, { waitMs: 5000 });
  const quietTaking = quiet.open(`UDP ${port2}`, () => bindUdp(port2));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(await old.successorWaiting(), false, 'a successor not announcing itself is not found');
  holder2.close();
  (await quietTaking).close();
  quiet.done();
  const next = new Handover(who, { waitMs: 5000, announceSuccessor: true });
  const taking = next.open(`UDP ${port}`, () => bindUdp(port));
  let found = false;
  for (let i = 0; i < 20 && !found; i++) found = await old.successorWaiting();
  assert.ok(found, 'the successor waits');
  assert.equal(await next.successorWaiting(), false, 'not its own socket');
  assert.equal(await new Handover(who).successorWaiting(), false, 'a daemon not told to wait (the world) never asks');
  holder.close();
  const mine = await taking;
  next.done();
  assert.equal(await old.successorWaiting(), false, 'started: nobody waits any more');
  mine.close();
});

test('not told to wait (the default), or past the wait: the error at once; other errors are never waited for', async () => {
  const holder = await bindUdp();
  const port = holder.address().port;
  try {
    const t0 = performance.now();
    await assert.rejects(
      new Handover('gateway').open(`UDP ${port}`, () => bindUdp(port)),
      /EADDRINUSE/,
    );
    assert.ok(performance.now() - t0 < 200, 'at once');
    await assert.rejects(
      new Handover('gateway', { waitMs: 300 }).open(`UDP ${port}`, () => bindUdp(port)),
      /EADDRINUSE/,
    );
    let tries = 0;
    await assert.rejects(
      new Handover('gateway', { waitMs: 5000 }).open('TUN device x', () => {
        tries++;
        throw new Error('ioctl TUNSETIFF: Operation not permitted (errno 1)');
      }),
      /Operation not permitted/,
    );
    assert.equal(tries, 1, 'a missing capability is not waited for');
  } finally {
    holder.close();
  }
});

test('the ready file (deploy/: the startup probe) is removed at start, written at the first open, before any wait, and once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-handover-'));
  const readyFile = join(dir, 'ready');
  const holder = await bindUdp();
  const port = holder.address().port;
  try {
    // one left by the container's previous run (the pod's /tmp outlives a restart)
    writeFileSync(readyFile, '');
    const h = new Handover('node agent', { waitMs: 5000, readyFile });
    assert.ok(!existsSync(readyFile), 'not before the daemon reaches its data path, whatever an earlier run left');
    const taking = h.open(`UDP ${port}`, () => bindUdp(port));
    assert.ok(existsSync(readyFile), 'written while it waits: the old pod may now be stopped');
    holder.close();
    (await taking).close();
    h.done();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('STRAIT_HANDOVER_WAIT_S: whole seconds up to 3600; unset or empty is 0; anything else refused naming it', () => {
  assert.equal(handoverWaitMsFromEnv({}), 0);
  assert.equal(handoverWaitMsFromEnv({ STRAIT_HANDOVER_WAIT_S: '' }), 0);
  assert.equal(handoverWaitMsFromEnv({ STRAIT_HANDOVER_WAIT_S: '120' }), 120_000);
  for (const bad of ['-1', '1.5', '3601', 'soon', '99999'])
    assert.throws(
      () => handoverWaitMsFromEnv({ STRAIT_HANDOVER_WAIT_S: bad }),
      (err: Error & { code?: string }) => err.code === 'STRAIT_ERR_CONFIG_INVALID' && err.message.includes(`"${bad}"`),
      bad,
    );
});
