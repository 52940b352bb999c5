// The ResourceStore conformance suite: named table tests over every method. Runs against
// the embedded store in-process, through the store API, and later the Kubernetes store.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStraitError, type ErrorCode } from '../../src/base/errors/index.js';
import type { KindRef, KubeObject, ResourceStore, WatchEvent } from '../../src/platform/store/index.js';

export interface StoreHarness {
  store: ResourceStore;
  cleanup(): Promise<void>;
  /** how many changes the store keeps for watches; when given, "too old" is tested by writing past it */
  historyLimit?: number;
}

export const CM: KindRef = { apiVersion: 'v1', kind: 'ConfigMap' };
export const NS: KindRef = { apiVersion: 'v1', kind: 'Namespace' };
const PA_V1B1: KindRef = { apiVersion: 'security.istio.io/v1beta1', kind: 'PeerAuthentication' };
const PA_V1: KindRef = { apiVersion: 'security.istio.io/v1', kind: 'PeerAuthentication' };
const EVENT: KindRef = { apiVersion: 'v1', kind: 'Event' };

export function cm(name: string, opts: { ns?: string; labels?: Record<string, string>; data?: Record<string, string> } = {}): KubeObject {
  return {
    ...CM,
    metadata: { name, ...(opts.ns ? { namespace: opts.ns } : {}), ...(opts.labels ? { labels: opts.labels } : {}) },
    data: opts.data ?? { k: name },
  };
}

function pa(name: string, mode: string, ns = 'default'): KubeObject {
  return { ...PA_V1B1, metadata: { name, namespace: ns }, spec: { mtls: { mode } } };
}

async function rejectsWith(p: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isStraitError(err, code), `expected ${code}, got ${(err as Error)?.stack ?? String(err)}`);
    return true;
  });
}

/** Collect watch events until `until` says stop (or time out). */
export async function collect(
  store: ResourceStore,
  kind: KindRef,
  opts: Parameters<ResourceStore['watch']>[1],
  until: (evs: WatchEvent[]) => boolean,
  timeoutMs = 5000,
): Promise<WatchEvent[]> {
  const evs: WatchEvent[] = [];
  let wake: () => void = () => undefined;
  const w = store.watch(kind, opts, (ev) => {
    evs.push(ev);
    wake();
  });
  try {
    const deadline = Date.now() + timeoutMs;
    while (!until(evs)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`watch timed out with ${evs.length} events: ${JSON.stringify(evs.map((e) => [e.type, e.object.metadata.name]))}`);
      await Promise.race([
        new Promise<void>((r) => {
          wake = r;
        }),
        new Promise((r) => setTimeout(r, Math.min(left, 50))),
        w.done,
      ]);
    }
    return evs;
  } finally {
    w.stop();
  }
}

const sig = (evs: WatchEvent[]) => evs.map((e) => `${e.type} ${e.object.metadata.name}`);
const until = (n: number) => (evs: WatchEvent[]) => evs.length >= n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Case {
  name: string;
  run(h: StoreHarness): Promise<void>;
}

const cases: Case[] = [
  {
    name: 'get of a missing object is undefined',
    async run({ store }) {
      assert.equal(await store.get(CM, 'nope', 'default'), undefined);
    },
  },
  {
    name: 'apply creates with uid, creationTimestamp, generation 1 and a numeric resourceVersion',
    async run({ store }) {
      const o = await store.apply(cm('a', { ns: 'team' }));
      assert.match(o.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
      assert.match(o.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.match(o.metadata.resourceVersion ?? '', /^\d+$/);
      assert.equal(o.metadata.namespace, 'team');
      // generation counts spec changes: kinds with a spec (Kubernetes gives a ConfigMap none)
      assert.equal((await store.apply(pa('a', 'STRICT', 'team'))).metadata.generation, 1);
      assert.deepEqual(o['data'], { k: 'a' });
      assert.deepEqual(await store.get(CM, 'a', 'team'), o);
    },
  },
  {
    name: 'a namespaced kind without namespace lands in "default"',
    async run({ store }) {
      const o = await store.apply(cm('d'));
      assert.equal(o.metadata.namespace, 'default');
      assert.ok(await store.get(CM, 'd'));
      assert.ok(await store.get(CM, 'd', 'default'));
    },
  },
  {
    name: 'a cluster-scoped kind ignores the namespace',
    async run({ store }) {
      const o = await store.apply({ ...NS, metadata: { name: 'team', namespace: 'x' } });
      assert.equal(o.metadata.namespace, undefined);
      assert.ok(await store.get(NS, 'team'));
      assert.ok(await store.get(NS, 'team', 'other'));
      assert.deepEqual(
        (await store.list(NS, { namespace: 'other' })).items.map((i) => i.metadata.name),
        ['team'],
      );
    },
  },
  {
    name: 'objects returned are copies',
    async run({ store }) {
      const o = await store.apply(cm('c'));
      (o['data'] as Record<string, string>)['k'] = 'changed';
      o.metadata.labels = { x: 'y' };
      const g = await store.get(CM, 'c');
      assert.deepEqual(g?.['data'], { k: 'c' });
      assert.equal(g?.metadata.labels, undefined);
      (g!['data'] as Record<string, string>)['k'] = 'again';
      assert.deepEqual((await store.get(CM, 'c'))?.['data'], { k: 'c' });
    },
  },
  {
    name: "list filters by namespace; no namespace lists all; resourceVersion is at least every item's",
    async run({ store }) {
      await store.apply(cm('a', { ns: 'n1' }));
      await store.apply(cm('b', { ns: 'n1' }));
      const last = await store.apply(cm('a', { ns: 'n2' }));
      const all = await store.list(CM);
      assert.deepEqual(all.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`).sort(), ['n1/a', 'n1/b', 'n2/a']);
      assert.ok(Number(all.resourceVersion) >= Number(last.metadata.resourceVersion));
      assert.deepEqual((await store.list(CM, { namespace: 'n1' })).items.map((i) => i.metadata.name).sort(), ['a', 'b']);
      assert.deepEqual((await store.list(CM, { namespace: 'n3' })).items, []);
      assert.deepEqual((await store.list(NS)).items, []);
    },
  },
  {
    name: 'label selectors: =, ==, !=, in, notin, exists, !exists, and combinations',
    async run({ store }) {
      await store.apply(cm('p1', { labels: { app: 'web', tier: 'front' } }));
      await store.apply(cm('p2', { labels: { app: 'db', tier: 'back' } }));
      await store.apply(cm('p3', { labels: { app: 'web' } }));
      await store.apply(cm('p4'));
      const table: [string, string[]][] = [
        ['app=web', ['p1', 'p3']],
        ['app==web', ['p1', 'p3']],
        ['app!=web', ['p2', 'p4']],
        ['app in (db, web)', ['p1', 'p2', 'p3']],
        ['app notin (web)', ['p2', 'p4']],
        ['tier', ['p1', 'p2']],
        ['!tier', ['p3', 'p4']],
        ['app=web,tier', ['p1']],
        ['app=web,!tier', ['p3']],
        ['app in (web),tier notin (back)', ['p1', 'p3']],
        ['app in (web),tier,tier notin (back)', ['p1']],
        ['', ['p1', 'p2', 'p3', 'p4']],
      ];
      for (const [sel, want] of table) {
        const got = (await store.list(CM, { labelSelector: sel })).items.map((i) => i.metadata.name).sort();
        assert.deepEqual(got, want, `selector ${JSON.stringify(sel)}`);
      }
      await rejectsWith(store.list(CM, { labelSelector: 'app in (web' }), 'STRAIT_ERR_USAGE');
    },
  },
  {
    name: 'apply merges (JSON merge patch): labels merged, null removes, arrays replaced, status kept',
    async run({ store }) {
      await store.apply({
        ...PA_V1B1,
        metadata: { name: 'm', labels: { a: '1', b: '2' } },
        spec: { selector: { matchLabels: { app: 'm' } }, mtls: { mode: 'STRICT' }, portLevelMtls: { 8080: { mode: 'DISABLE' } }, list: [1, 2] },
      });
      await store.updateStatus({ ...PA_V1B1, metadata: { name: 'm' }, status: { ok: true } });
      const o = await store.apply({
        ...PA_V1B1,
        metadata: { name: 'm', labels: { b: null as unknown as string, c: '3' } },
        spec: { portLevelMtls: { 9090: { mode: 'STRICT' } }, list: [3] },
        status: { ignored: true },
      });
      assert.deepEqual(o.metadata.labels, { a: '1', c: '3' });
      assert.deepEqual(o.spec, {
        selector: { matchLabels: { app: 'm' } },
        mtls: { mode: 'STRICT' },
        portLevelMtls: { 8080: { mode: 'DISABLE' }, 9090: { mode: 'STRICT' } },
        list: [3],
      });
      assert.deepEqual(o.status, { ok: true });
    },
  },
  {
    name: 'generation moves when the spec changes, not for metadata or status; a no-op apply keeps the resourceVersion',
    async run({ store }) {
      const a = await store.apply(pa('g', 'STRICT'));
      const b = await store.apply<KubeObject>({ ...pa('g', 'STRICT'), metadata: { name: 'g', namespace: 'default', labels: { x: 'y' } } });
      assert.equal(b.metadata.generation, 1);
      assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
      const c = await store.updateStatus({ ...b, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      assert.equal(c.metadata.generation, 1);
      const d = await store.apply(pa('g', 'PERMISSIVE'));
      assert.equal(d.metadata.generation, 2);
      const e = await store.apply(pa('g', 'PERMISSIVE'));
      assert.equal(e.metadata.resourceVersion, d.metadata.resourceVersion);
      assert.equal(e.metadata.uid, a.metadata.uid);
      assert.equal(e.metadata.creationTimestamp, a.metadata.creationTimestamp);
    },
  },
  {
    name: 'resourceVersion grows with every write, across kinds',
    async run({ store }) {
      const rvs: number[] = [];
      for (let i = 0; i < 5; i++) {
        rvs.push(Number((await store.apply(cm(`r${i}`))).metadata.resourceVersion));
        rvs.push(Number((await store.apply(pa(`r${i}`, 'STRICT'))).metadata.resourceVersion));
      }
      for (let i = 1; i < rvs.length; i++) assert.ok(rvs[i]! > rvs[i - 1]!, `rv ${rvs[i]} after ${rvs[i - 1]}`);
    },
  },
  {
    name: 'every served version of a kind names the same objects',
    async run({ store }) {
      await store.apply({ ...pa('v', 'STRICT'), apiVersion: PA_V1.apiVersion });
      assert.ok(await store.get(PA_V1B1, 'v'));
      assert.equal((await store.list(PA_V1)).items.length, 1);
    },
  },
  {
    name: 'update: optimistic concurrency with resourceVersion (STRAIT_ERR_CONFLICT), replaces, keeps status',
    async run({ store }) {
      // a kind with a status (Kubernetes gives a ConfigMap none)
      const a: KubeObject = await store.apply({ ...PA_V1B1, metadata: { name: 'u', labels: { keep: 'no' } }, spec: { x: '1', y: '2' } });
      await store.updateStatus({ ...a, status: { phase: 'Ok' } });
      await rejectsWith(store.update({ ...a, spec: { x: 'stale' } }), 'STRAIT_ERR_CONFLICT');
      const cur = (await store.get(PA_V1B1, 'u'))!;
      const b = await store.update({ ...cur, metadata: { ...cur.metadata, labels: {} }, spec: { x: '3' } });
      assert.deepEqual(b.spec, { x: '3' });
      // (Kubernetes omits an empty map)
      assert.deepEqual(b.metadata.labels ?? {}, {});
      assert.deepEqual(b.status, { phase: 'Ok' });
      assert.equal(b.metadata.uid, a.metadata.uid);
      const c = await store.update({ ...PA_V1B1, metadata: { name: 'u' }, spec: { x: '4' } });
      assert.deepEqual(c.spec, { x: '4' });
      await rejectsWith(store.update(pa('missing', 'STRICT')), 'STRAIT_ERR_NOT_FOUND');
      await rejectsWith(store.update(cm('missing')), 'STRAIT_ERR_NOT_FOUND');
      const err = await store.update({ ...a, spec: {} }).catch((e: unknown) => e);
      assert.ok(isStraitError(err, 'STRAIT_ERR_CONFLICT'));
      assert.equal(err.exitCode, 4);
    },
  },
  {
    name: 'apply with a stale resourceVersion is a conflict',
    async run({ store }) {
      const a = await store.apply(cm('ac'));
      await store.apply(cm('ac', { data: { k: 'new' } }));
      await rejectsWith(store.apply({ ...a, data: { k: 'old' } }), 'STRAIT_ERR_CONFLICT');
    },
  },
  {
    name: 'concurrent updates from the same resourceVersion: exactly one wins, the others conflict',
    async run({ store }) {
      const base = await store.apply(cm('race', { data: { v: 'base' } }));
      const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => store.update({ ...base, data: { v: String(i) } })));
      const won = results.filter((r) => r.status === 'fulfilled');
      assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of results) if (r.status === 'rejected') assert.ok(isStraitError(r.reason, 'STRAIT_ERR_CONFLICT'), String(r.reason));
      const final = (await store.get(CM, 'race'))!;
      assert.deepEqual(final['data'], (won[0] as PromiseFulfilledResult<KubeObject>).value['data']);
    },
  },
  {
    name: 'concurrent applies of different objects all land, each with its own resourceVersion',
    async run({ store }) {
      const done = await Promise.all(Array.from({ length: 25 }, (_, i) => store.apply(cm(`many-${i}`))));
      assert.equal(new Set(done.map((o) => o.metadata.resourceVersion)).size, 25);
      assert.equal((await store.list(CM, { namespace: 'default' })).items.length, 25);
    },
  },
  {
    name: 'updateStatus replaces only status; stale resourceVersion conflicts; missing object is not found',
    async run({ store }) {
      const a = await store.apply(pa('s', 'STRICT'));
      const b = await store.updateStatus({ ...a, spec: { mtls: { mode: 'DISABLE' } }, status: { a: 1 } });
      assert.deepEqual(b.spec, { mtls: { mode: 'STRICT' } });
      assert.deepEqual(b.status, { a: 1 });
      await rejectsWith(store.updateStatus({ ...a, status: { a: 2 } }), 'STRAIT_ERR_CONFLICT');
      const c = await store.updateStatus({ ...b, status: { a: 2 } });
      assert.deepEqual((await store.get(PA_V1B1, 's'))?.status, { a: 2 });
      assert.ok(Number(c.metadata.resourceVersion) > Number(b.metadata.resourceVersion));
      await rejectsWith(store.updateStatus({ ...pa('none', 'STRICT'), status: {} }), 'STRAIT_ERR_NOT_FOUND');
    },
  },
  {
    name: 'delete returns true once, then false; the object is gone',
    async run({ store }) {
      await store.apply(cm('x', { ns: 'n' }));
      assert.equal(await store.delete(CM, 'x', 'default'), false);
      assert.equal(await store.delete(CM, 'x', 'n'), true);
      assert.equal(await store.delete(CM, 'x', 'n'), false);
      assert.equal(await store.get(CM, 'x', 'n'), undefined);
      assert.ok(await store.apply(cm('x', { ns: 'n' })));
      // a re-created object starts over (generation: a kind with a spec; a ConfigMap has none in Kubernetes)
      await store.apply(pa('x', 'STRICT', 'n'));
      assert.equal((await store.apply(pa('x', 'PERMISSIVE', 'n'))).metadata.generation, 2);
      assert.equal(await store.delete(PA_V1B1, 'x', 'n'), true);
      assert.equal((await store.apply(pa('x', 'STRICT', 'n'))).metadata.generation, 1);
    },
  },
  {
    name: 'names must be DNS-1123',
    async run({ store }) {
      for (const bad of ['Upper', 'under_score', '-lead', '', 'a'.repeat(254)]) {
        await rejectsWith(store.apply(cm(bad)), 'STRAIT_ERR_USAGE');
      }
      assert.deepEqual((await store.list(CM)).items, []);
    },
  },
  {
    name: 'watch from a list resourceVersion sees ADDED, MODIFIED, DELETED in order',
    async run({ store }) {
      await store.apply(cm('before'));
      const { resourceVersion } = await store.list(CM);
      const p = collect(store, CM, { resourceVersion }, until(3));
      await store.apply(cm('w'));
      await store.apply(cm('w', { data: { k: 'v2' } }));
      await store.delete(CM, 'w');
      const evs = await p;
      assert.deepEqual(sig(evs), ['ADDED w', 'MODIFIED w', 'DELETED w']);
      assert.deepEqual(evs[1]!.object['data'], { k: 'v2' });
      const rvs = evs.map((e) => Number(e.object.metadata.resourceVersion));
      assert.ok(rvs[0]! > Number(resourceVersion) && rvs[1]! > rvs[0]! && rvs[2]! > rvs[1]!);
    },
  },
  {
    name: 'watch from an older resourceVersion replays what happened since',
    async run({ store }) {
      const { resourceVersion } = await store.list(CM);
      await store.apply(cm('r1'));
      await store.apply(pa('other-kind', 'STRICT'));
      await store.apply(cm('r2'));
      await store.delete(CM, 'r1');
      const evs = await collect(store, CM, { resourceVersion }, until(3));
      assert.deepEqual(sig(evs), ['ADDED r1', 'ADDED r2', 'DELETED r1']);
    },
  },
  {
    name: 'watch without a resourceVersion starts with the current objects as ADDED',
    async run({ store }) {
      await store.apply(cm('s1'));
      await store.apply(cm('s2', { ns: 'other' }));
      const evs = await collect(store, CM, {}, until(2));
      assert.deepEqual(sig(evs).sort(), ['ADDED s1', 'ADDED s2']);
    },
  },
  {
    name: 'watch filters by namespace and label selector; objects moving in/out of the selector are ADDED/DELETED',
    async run({ store }) {
      const { resourceVersion } = await store.list(CM);
      const p = collect(store, CM, { resourceVersion, namespace: 'n', labelSelector: 'app=web' }, until(4));
      await store.apply(cm('other-ns', { ns: 'x', labels: { app: 'web' } }));
      await store.apply(cm('nolabel', { ns: 'n' }));
      await store.apply(cm('in', { ns: 'n', labels: { app: 'web' } }));
      await store.apply(cm('nolabel', { ns: 'n', labels: { app: 'web' } }));
      await store.apply(cm('in', { ns: 'n', labels: { app: 'db' } }));
      await store.delete(CM, 'nolabel', 'n');
      const evs = await p;
      assert.deepEqual(sig(evs), ['ADDED in', 'ADDED nolabel', 'DELETED in', 'DELETED nolabel']);
    },
  },
  {
    name: 'watch stop ends delivery and resolves done',
    async run({ store }) {
      const { resourceVersion } = await store.list(CM);
      const evs: WatchEvent[] = [];
      const w = store.watch(CM, { resourceVersion }, (ev) => evs.push(ev));
      await store.apply(cm('one'));
      for (let i = 0; i < 100 && evs.length < 1; i++) await sleep(10);
      w.stop();
      await w.done;
      await store.apply(cm('two'));
      await sleep(100);
      assert.deepEqual(sig(evs), ['ADDED one']);
    },
  },
  {
    name: 'watch from a resourceVersion older than the history kept fails with STRAIT_ERR_WATCH_EXPIRED',
    async run({ store, historyLimit }) {
      if (historyLimit === undefined) return;
      const first = await store.apply(cm('old'));
      for (let i = 0; i < historyLimit * 2 + 5; i++) await store.apply(cm('old', { data: { i: String(i) } }));
      const evs: WatchEvent[] = [];
      const w = store.watch(CM, { resourceVersion: first.metadata.resourceVersion! }, (ev) => evs.push(ev));
      await rejectsWith(w.done, 'STRAIT_ERR_WATCH_EXPIRED');
      assert.deepEqual(evs, []);
      // the list's resourceVersion is always recent enough
      const { resourceVersion } = await store.list(CM);
      const p = collect(store, CM, { resourceVersion }, until(1));
      await store.apply(cm('fresh'));
      assert.deepEqual(sig(await p), ['ADDED fresh']);
    },
  },
  {
    name: 'recordEvent aggregates by involved object and reason (count, firstTimestamp, lastTimestamp)',
    async run({ store }) {
      const target = await store.apply(pa('ev', 'STRICT', 'team'));
      const involvedObject = { apiVersion: target.apiVersion, kind: target.kind, name: 'ev', namespace: 'team', uid: target.metadata.uid };
      await store.recordEvent({ involvedObject, type: 'Normal', reason: 'Applied', message: 'first', source: 'test' });
      await store.recordEvent({ involvedObject, type: 'Normal', reason: 'Applied', message: 'second', source: 'test' });
      await store.recordEvent({ involvedObject, type: 'Warning', reason: 'Invalid', message: 'bad', source: 'test' });
      const evs = (await store.list(EVENT, { namespace: 'team' })).items;
      assert.equal(evs.length, 2);
      const applied = evs.find((e) => e['reason'] === 'Applied')!;
      assert.equal(applied['count'], 2);
      assert.equal(applied['message'], 'second');
      assert.equal(applied['type'], 'Normal');
      assert.match(String(applied['firstTimestamp']), /^\d{4}-\d\d-\d\dT/);
      assert.ok(String(applied['lastTimestamp']) >= String(applied['firstTimestamp']));
      assert.deepEqual(applied['involvedObject'], involvedObject);
      const invalid = evs.find((e) => e['reason'] === 'Invalid')!;
      assert.equal(invalid['count'], 1);
      assert.equal(invalid['type'], 'Warning');
    },
  },
];

export function runStoreConformance(name: string, makeStore: () => Promise<StoreHarness>): void {
  describe(`ResourceStore conformance: ${name}`, () => {
    for (const c of cases) {
      test(c.name, async () => {
        const h = await makeStore();
        try {
          await c.run(h);
        } finally {
          await h.cleanup();
        }
      });
    }
  });
}
