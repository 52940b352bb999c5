import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { matchesSelector, mergePatch, openEmbeddedStore, parseSelector } from '../../src/platform/store/index.js';
import { CM, cm, runStoreConformance } from '../conformance/store-suite.js';

const HISTORY = 20;

runStoreConformance('embedded (in-process)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
  const store = openEmbeddedStore({ dir, historyLimit: HISTORY });
  return {
    store,
    historyLimit: HISTORY,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('embedded store', () => {
  test('writes survive close and reopen; resourceVersion keeps growing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
    try {
      let s = openEmbeddedStore({ dir });
      const a = await s.apply(cm('keep', { labels: { a: 'b' } }));
      await s.close();
      s = openEmbeddedStore({ dir });
      assert.deepEqual(await s.get(CM, 'keep'), a);
      const b = await s.apply(cm('next'));
      assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('group commit: writes of one turn share a commit, keep their order, and reads see only committed state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
    try {
      const s = openEmbeddedStore({ dir });
      const { resourceVersion } = await s.list(CM);
      const seen: string[] = [];
      const w = s.watch(CM, { resourceVersion }, (ev) => seen.push(`${ev.type} ${ev.object.metadata.name} ${ev.object.metadata.resourceVersion}`));
      const writes = Array.from({ length: 20 }, (_, i) => s.apply(cm(`g${i}`)));
      const upd = s.apply(cm('g0', { data: { k: 'second' } }));
      const got = await s.get(CM, 'g0');
      assert.deepEqual(got?.['data'], { k: 'second' }, 'a read after staged writes sees them (they were committed first)');
      const done = await Promise.all([...writes, upd]);
      const rvs = done.map((o) => Number(o.metadata.resourceVersion));
      for (let i = 1; i < rvs.length; i++) assert.equal(rvs[i], rvs[i - 1]! + 1);
      for (let i = 0; i < 100 && seen.length < 21; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(seen.length, 21);
      assert.equal(seen[0], `ADDED g0 ${rvs[0]}`);
      assert.equal(seen[20], `MODIFIED g0 ${rvs[20]}`);
      w.stop();
      await s.close();
      const again = openEmbeddedStore({ dir });
      assert.equal((await again.list(CM)).items.length, 20);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Events older than the TTL are deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
    try {
      const s = openEmbeddedStore({ dir, eventTtlSeconds: 1 });
      const involvedObject = { apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'default' };
      await s.recordEvent({ involvedObject, type: 'Normal', reason: 'Old', message: 'old' });
      await new Promise((r) => setTimeout(r, 2100));
      await s.recordEvent({ involvedObject, type: 'Normal', reason: 'New', message: 'new' });
      const evs = (await s.list({ apiVersion: 'v1', kind: 'Event' })).items.map((e) => e['reason']);
      assert.deepEqual(evs, ['New']);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a store dir is held by one store at a time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
    try {
      const s = openEmbeddedStore({ dir });
      assert.throws(
        () => openEmbeddedStore({ dir }),
        (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE'),
      );
      await s.close();
      const again = openEmbeddedStore({ dir });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('operations after close fail with STRAIT_ERR_STORE_UNAVAILABLE', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-store-'));
    try {
      const s = openEmbeddedStore({ dir });
      await s.close();
      await assert.rejects(s.get(CM, 'x'), (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('label selector parser', () => {
  const table: { name: string; sel: string; labels: Record<string, string>; want: boolean }[] = [
    { name: 'equality', sel: 'a=b', labels: { a: 'b' }, want: true },
    { name: 'double equals', sel: 'a==b', labels: { a: 'c' }, want: false },
    { name: 'inequality matches a missing key', sel: 'a!=b', labels: {}, want: true },
    { name: 'in', sel: 'a in (x, y)', labels: { a: 'y' }, want: true },
    { name: 'in needs the key', sel: 'a in (x)', labels: {}, want: false },
    { name: 'notin matches a missing key', sel: 'a notin (x)', labels: {}, want: true },
    { name: 'exists', sel: 'example.com/a', labels: { 'example.com/a': '' }, want: true },
    { name: 'not exists', sel: '!a', labels: { a: '1' }, want: false },
    { name: 'and', sel: 'a=1, b in (2,3), !c', labels: { a: '1', b: '3' }, want: true },
    { name: 'empty value', sel: 'a=', labels: { a: '' }, want: true },
  ];
  for (const c of table) {
    test(c.name, () => assert.equal(matchesSelector(parseSelector(c.sel), c.labels), c.want));
  }
  for (const bad of ['a in (x', 'a=b=c', '!', 'a in x', 'Bad Key=1', 'a=(x)']) {
    test(`rejects ${JSON.stringify(bad)}`, () => {
      assert.throws(
        () => parseSelector(bad),
        (err: unknown) => isStraitError(err, 'STRAIT_ERR_USAGE'),
      );
    });
  }
  test('fuzz: random selectors parse or fail with a StraitError', () => {
    const alphabet = 'ab=!,() innotin.-/_xyz';
    for (let i = 0; i < 20000; i++) {
      let s = '';
      const n = Math.floor(Math.random() * 24);
      for (let j = 0; j < n; j++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
      try {
        matchesSelector(parseSelector(s), { a: 'b' });
      } catch (err) {
        assert.ok(isStraitError(err), `${JSON.stringify(s)}: ${String(err)}`);
      }
    }
  });
});

describe('JSON merge patch (RFC 7386 examples)', () => {
  const table: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  table.forEach(([target, patch, want], i) => {
    test(`example ${i + 1}`, () => {
      const before = JSON.stringify(target);
      assert.deepEqual(mergePatch(target, patch), want);
      assert.equal(JSON.stringify(target), before, 'target untouched');
    });
  });
});
