// List, then watch from the list's resourceVersion; when the watch ends (the store's
// STRAIT_ERR_WATCH_EXPIRED / 410 "too old", a transport error, the server closing it) or
// the list fails, list again after the backoff. Every (re)list hands the full set to
// onList, so the owner can notice deletions it missed while not watching.
// Handlers get the store's objects: copy before changing one.
import { systemClock, type Clock } from '../../base/clock/index.js';
import type { KindRef, KubeObject, ListOptions, ResourceStore, Watch, WatchEvent } from '../store/index.js';
import { DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from './backoff.js';

export interface InformerHandlers<T extends KubeObject = KubeObject> {
  onList(items: T[]): void;
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
  /** a list failed or a watch ended with an error; the informer lists again after the backoff */
  onError?(err: unknown): void;
}

export interface InformerOptions {
  clock?: Clock;
  backoff?: BackoffPolicy;
}

export class Informer<T extends KubeObject = KubeObject> {
  private watch: Watch | undefined;
  private stopped = false;
  private failures = 0;
  private timer: { cancel(): void } | undefined;
  private markFirstSync: () => void = () => undefined;
  private readonly clock: Clock;
  private readonly backoff: BackoffPolicy;
  /** true while the last list succeeded and its watch runs: a cache fed by it may answer */
  synced = false;
  /** resolves after the first list was handed to onList */
  readonly firstSync: Promise<void>;

  constructor(
    private readonly store: ResourceStore,
    private readonly kind: KindRef,
    private readonly opts: ListOptions,
    private readonly handlers: InformerHandlers<T>,
    o: InformerOptions = {},
  ) {
    this.clock = o.clock ?? systemClock;
    this.backoff = o.backoff ?? DEFAULT_BACKOFF;
    this.firstSync = new Promise<void>((r) => {
      this.markFirstSync = r;
    });
  }

  start(): this {
    void this.run();
    return this;
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    try {
      const list = await this.store.list<T>(this.kind, this.opts);
      if (this.stopped) return;
      this.handlers.onList(list.items);
      this.markFirstSync();
      const w = this.store.watch<T>(this.kind, { ...this.opts, resourceVersion: list.resourceVersion }, (ev) => this.handlers.onEvent(ev.type, ev.object));
      this.watch = w;
      this.synced = true;
      this.failures = 0;
      await w.done;
    } catch (err) {
      if (this.stopped) return;
      this.handlers.onError?.(err);
    }
    this.relistLater();
  }

  private relistLater(): void {
    this.synced = false;
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.run(), backoffDelay(++this.failures, this.backoff));
  }

  stop(): void {
    this.stopped = true;
    this.synced = false;
    this.timer?.cancel();
    this.watch?.stop();
  }
}

/** Handlers for an owner that wants events only: each listed object comes as MODIFIED. */
export function eventHandlers<T extends KubeObject>(onEvent: (ev: WatchEvent<T>) => void, onError?: (err: unknown) => void): InformerHandlers<T> {
  return {
    onList: (items) => {
      for (const object of items) onEvent({ type: 'MODIFIED', object });
    },
    onEvent: (type, object) => onEvent({ type, object }),
    ...(onError ? { onError } : {}),
  };
}
