// Stores for the multicluster tests: the embedded store (openEmbeddedStore in a temp dir),
// and FlakyStore, a wrapper that can take any ResourceStore "down" to simulate a broker
// outage, or end its watches as expired (410); CountingStore, which counts the calls made of it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { E } from '../../src/base/errors/index.js';
import {
  openEmbeddedStore,
  type ApplyOptions,
  type CoreEvent,
  type KindRef,
  type KubeObject,
  type ListOptions,
  type ObjectList,
  type ResourceStore,
  type Watch,
  type WatchEvent,
  type WatchOptions,
} from '../../src/platform/store/index.js';

export function newTestStore(): ResourceStore {
  return openEmbeddedStore({ dir: mkdtempSync(join(tmpdir(), 'strait-mc-store-')) });
}

export class FlakyStore implements ResourceStore {
  private down = false;
  private watches = new Set<{ w: Watch; fail: (e: Error) => void }>();

  /** list calls, failed ones included (tests count re-lists) */
  lists = 0;
  /** each watch event is delivered this late, as a real API server's watch lags its writes */
  watchDelayMs = 0;

  constructor(readonly inner: ResourceStore) {}

  /** End every open watch the way a store ends one that fell too far behind: STRAIT_ERR_WATCH_EXPIRED (HTTP 410). */
  expireWatches(): void {
    for (const x of [...this.watches]) x.fail(E.watchExpired('1', '2'));
    this.watches.clear();
  }

  setDown(down: boolean): void {
    this.down = down;
    if (down) {
      for (const x of [...this.watches]) x.fail(E.storeUnavailable('flaky', 'store is down'));
      this.watches.clear();
    }
  }

  private check(): void {
    if (this.down) throw E.storeUnavailable('flaky', 'store is down');
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    this.check();
    return this.inner.get<T>(kind, name, namespace);
  }
  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts?: ListOptions): Promise<ObjectList<T>> {
    this.lists++;
    this.check();
    return this.inner.list<T>(kind, opts);
  }
  async apply<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.check();
    return this.inner.apply(obj);
  }
  async update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.check();
    return this.inner.update(obj);
  }
  async updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.check();
    return this.inner.updateStatus(obj);
  }
  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    this.check();
    return this.inner.delete(kind, name, namespace);
  }
  async recordEvent(ev: CoreEvent): Promise<void> {
    this.check();
    return this.inner.recordEvent(ev);
  }
  async close(): Promise<void> {
    return this.inner.close();
  }

  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    let fail!: (e: Error) => void;
    const failed = new Promise<void>((_res, rej) => {
      fail = rej;
    });
    failed.catch(() => undefined);
    if (this.down) {
      fail(E.storeUnavailable('flaky', 'store is down'));
      return { stop: () => undefined, done: failed };
    }
    const deliver = (ev: WatchEvent<T>) => {
      if (!this.down) onEvent(ev);
    };
    const w = this.inner.watch<T>(kind, opts, (ev) => (this.watchDelayMs > 0 ? setTimeout(() => deliver(ev), this.watchDelayMs) : deliver(ev)));
    // the error first: stopping the inner watch resolves its done, which would win the race
    const entry = {
      w,
      fail: (e: Error) => {
        fail(e);
        w.stop();
      },
    };
    this.watches.add(entry);
    const done = Promise.race([w.done, failed]);
    done.catch(() => undefined);
    return {
      stop: () => {
        this.watches.delete(entry);
        w.stop();
      },
      done,
    };
  }
}

/** Calls a store was asked, by method (lists, gets, writes), to count the work one change costs. */
export class CountingStore implements ResourceStore {
  calls = { list: 0, get: 0, write: 0 };
  /** the kinds written since the last reset, in order */
  written: string[] = [];

  constructor(readonly inner: ResourceStore) {}

  reset(): void {
    this.calls = { list: 0, get: 0, write: 0 };
    this.written = [];
  }

  private wrote<T extends KubeObject>(kind: string, p: Promise<T>): Promise<T> {
    this.calls.write++;
    this.written.push(kind);
    return p;
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    this.calls.get++;
    return this.inner.get<T>(kind, name, namespace);
  }
  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts?: ListOptions): Promise<ObjectList<T>> {
    this.calls.list++;
    return this.inner.list<T>(kind, opts);
  }
  async apply<T extends KubeObject = KubeObject>(obj: T, opts?: ApplyOptions): Promise<T> {
    return this.wrote(obj.kind, this.inner.apply(obj, opts));
  }
  async update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.wrote(obj.kind, this.inner.update(obj));
  }
  async updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.wrote(`${obj.kind}/status`, this.inner.updateStatus(obj));
  }
  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    this.calls.write++;
    this.written.push(`${kind.kind}-`);
    return this.inner.delete(kind, name, namespace);
  }
  async recordEvent(ev: CoreEvent): Promise<void> {
    return this.inner.recordEvent(ev);
  }
  async close(): Promise<void> {
    return this.inner.close();
  }
  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    return this.inner.watch<T>(kind, opts, onEvent);
  }
}
