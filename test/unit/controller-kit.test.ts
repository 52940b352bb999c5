// The controller kit (src/platform/controller) on its own: the informer re-lists after a
// watch expires (410) or the store goes away, on the backoff; the keyed queue runs a key
// once however often it is added, never twice at a time, and retries with the backoff;
// the debounced loop coalesces bursts and retries failed runs.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ManualClock } from '../../src/base/clock/index.js';
import { isStraitError } from '../../src/base/errors/index.js';
import { DEFAULT_BACKOFF, DebouncedLoop, Informer, KeyQueue, backoffDelay, reconcileOnChange, type Requeue } from '../../src/platform/controller/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { FlakyStore, newTestStore } from '../support/stores.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const cm = (name: string): KubeObject => ({ ...CM, metadata: { name, namespace: 'default' }, data: { v: name } }) as KubeObject;
const turns = async (n = 20): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};
async function until(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const stores: ResourceStore[] = [];
const store = (): FlakyStore => {
  const s = new FlakyStore(newTestStore());
  stores.push(s);
  return s;
};
after(async () => {
  for (const s of stores) await s.close();
});

test('the backoff policy: 100 ms doubling to at most 2 s', () => {
  const table: [number, number][] = [
    [1, 100],
    [2, 200],
    [3, 400],
    [5, 1600],
    [6, 2000],
    [50, 2000],
  ];
  for (const [attempt, ms] of table) assert.equal(backoffDelay(attempt), ms, `attempt ${attempt}`);
  assert.equal(backoffDelay(3, { initialMs: 1000, maxMs: 300_000 }), 4000);
  assert.deepEqual(DEFAULT_BACKOFF, { initialMs: 100, maxMs: 2000 });
});

test('informer: a watch that expires (410) is re-listed after the backoff, and the re-list reports what changed meanwhile', async () => {
  const s = store();
  const clock = new ManualClock();
  await s.apply(cm('a'));
  const lists: string[][] = [];
  const events: string[] = [];
  const errors: unknown[] = [];
  const inf = new Informer(
    s,
    CM,
    { namespace: 'default' },
    {
      onList: (items) => lists.push(items.map((o) => o.metadata.name).sort()),
      onEvent: (type, o) => events.push(`${type} ${o.metadata.name}`),
      onError: (err) => errors.push(err),
    },
    { clock },
  ).start();
  try {
    await inf.firstSync;
    await until('the watch', () => inf.synced);
    assert.deepEqual(lists, [['a']]);
    s.expireWatches();
    await until('the watch to end', () => !inf.synced);
    assert.ok(isStraitError(errors[0], 'STRAIT_ERR_WATCH_EXPIRED'), String(errors[0]));
    await s.apply(cm('b')); // while nobody watches
    clock.advance(99);
    await turns();
    assert.equal(s.lists, 1, 'no re-list before the backoff');
    clock.advance(1);
    await until('the re-list', () => lists.length === 2 && inf.synced);
    assert.deepEqual(lists[1], ['a', 'b'], 'the re-list reports the object made while not watching');
    await s.apply(cm('c'));
    await until('the event of the new watch', () => events.includes('ADDED c'));
    assert.ok(!events.includes('ADDED b'), 'b came with the re-list, not as an event');
  } finally {
    inf.stop();
  }
});

test('informer: while the store is down it lists again after 100, 200, 400 ms ... and recovers', async () => {
  const s = store();
  const clock = new ManualClock();
  const lists: number[] = [];
  const inf = new Informer(s, CM, {}, { onList: (items) => lists.push(items.length), onEvent: () => undefined }, { clock }).start();
  try {
    await until('the first list', () => inf.synced);
    s.setDown(true);
    await until('the watch to fail', () => !inf.synced);
    for (const delay of [100, 200, 400, 800]) {
      const before = s.lists;
      clock.advance(delay - 1);
      await turns();
      assert.equal(s.lists, before, `no attempt before ${delay} ms`);
      clock.advance(1);
      await until(`the attempt after ${delay} ms`, () => s.lists === before + 1);
    }
    s.setDown(false);
    clock.advance(1600);
    await until('recovery', () => inf.synced && lists.length === 2);
    s.expireWatches();
    await until('the watch to end', () => !inf.synced);
    const before = s.lists;
    clock.advance(100);
    await until('a re-list after 100 ms: a good list started the backoff over', () => s.lists === before + 1 && inf.synced);
  } finally {
    inf.stop();
  }
});

test('queue: a key added many times runs once, and never twice at a time', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const runs: string[] = [];
  let inside = 0;
  let most = 0;
  const q = new KeyQueue(
    async (k) => {
      inside++;
      most = Math.max(most, inside);
      runs.push(k);
      if (k === 'a' && runs.length === 1) await gate;
      inside--;
    },
    { concurrency: 4 },
  );
  q.add('a');
  await until('a to start', () => runs.length === 1);
  for (let i = 0; i < 5; i++) q.add('a'); // while a runs: one more run, after this one
  q.add('b');
  q.add('b');
  await until('b', () => runs.includes('b'));
  assert.deepEqual(runs, ['a', 'b'], 'b runs beside a; the second a waits for the first');
  release();
  await q.idle();
  assert.deepEqual(runs.sort(), ['a', 'a', 'b']);
  assert.equal(most, 2);
  q.stop();
});

test('queue: a failing key is retried after 100, 200, 400 ms; success resets; waiting keys come back after their delay', async () => {
  const clock = new ManualClock();
  const results: (Requeue | 'throw')[] = ['throw', 'backoff', 'throw', undefined, 'throw', { afterMs: 5000 }, undefined];
  let runs = 0;
  const errors: string[] = [];
  const q = new KeyQueue(
    async () => {
      const r = results[runs++];
      if (r === 'throw') throw new Error(`run ${runs}`);
      return r;
    },
    { clock, onError: (k, e) => errors.push(`${k}: ${(e as Error).message}`) },
  );
  try {
    q.add('x');
    await until('the first run', () => runs === 1);
    for (const delay of [100, 200, 400]) {
      const before = runs;
      clock.advance(delay - 1);
      await turns();
      assert.equal(runs, before, `not before ${delay} ms`);
      clock.advance(1);
      await until(`the retry after ${delay} ms`, () => runs === before + 1);
    }
    assert.equal(runs, 4, 'the fourth run succeeded');
    await q.idle();
    q.add('x'); // fails again: the backoff starts over at 100 ms
    await until('run 5', () => runs === 5);
    await turns();
    clock.advance(100);
    await until('run 6 after 100 ms', () => runs === 6);
    await q.drained();
    let idle = false;
    void q.idle().then(() => {
      idle = true;
    });
    await turns();
    assert.equal(idle, false, 'a waiting key is not idle');
    clock.advance(4999);
    await turns();
    assert.equal(runs, 6);
    clock.advance(1);
    await until('run 7 after the waiting delay', () => runs === 7);
    await until('idle', () => idle);
    assert.deepEqual(errors, ['x: run 1', 'x: run 3', 'x: run 5']);
  } finally {
    q.stop();
  }
});

test('debounced loop: a burst is one run, a schedule while running is one more, a failure is retried', async () => {
  const clock = new ManualClock();
  let runs = 0;
  let fail = false;
  let release: (() => void) | undefined;
  const errors: unknown[] = [];
  const loop = new DebouncedLoop(
    async () => {
      runs++;
      if (release === undefined && runs === 2)
        await new Promise<void>((r) => {
          release = r;
        });
      if (fail) throw new Error('broken');
    },
    { debounceMs: 10, clock, onError: (e) => errors.push(e) },
  );
  try {
    for (let i = 0; i < 10; i++) loop.schedule();
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(runs, 1, 'ten schedules within the debounce: one run');
    loop.schedule();
    await until('run 2', () => release !== undefined);
    for (let i = 0; i < 5; i++) loop.schedule(); // while it runs
    release!();
    await until('one more run', () => runs === 3);
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(runs, 3);
    fail = true;
    loop.schedule();
    await until('the failed run', () => errors.length === 1);
    fail = false;
    clock.advance(99);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(runs, 4, 'no retry before the backoff');
    clock.advance(1);
    await until('the retry', () => runs === 5);
    await loop.settled();
    assert.equal(runs, 6, 'settled() asks for a run and waits for it');
  } finally {
    loop.stop();
  }
});

test('reconcileOnChange: changes of the watched kinds are coalesced into runs of the reconcile', async () => {
  const s = store();
  let runs = 0;
  const seen: number[] = [];
  const loop = reconcileOnChange(
    s,
    [CM],
    async () => {
      runs++;
      seen.push((await s.list(CM)).items.length);
    },
    { debounceMs: 20 },
  );
  try {
    await loop.settled();
    const before = runs;
    await Promise.all(['p', 'q', 'r', 's'].map((n) => s.apply(cm(n))));
    await until('a run that saw all four', () => seen.at(-1) === 4);
    await loop.settled();
    assert.ok(runs - before <= 3, `four applies in one burst: ${runs - before} runs`);
  } finally {
    loop.stop();
  }
});
