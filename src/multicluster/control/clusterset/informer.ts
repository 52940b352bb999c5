// List, then watch from the list's resourceVersion; when the watch ends with an error
// (store down, "too old"), list again after a backoff. Every (re)list reports the full
// set so the owner can notice deletions it missed.
//
// Not the world's reconcile loop (src/world/supervisor/reconcile-loop.ts), on purpose: that
// loop turns every event of its kinds into one debounced (30 ms) run of a whole-cluster
// reconcile, which suits the world's few objects. The multicluster agents and the zone
// source need what it throws away: the object of each event (the key to reconcile, the
// slice for the informer cache), `synced` (whether that cache may answer), namespace and
// label filters, and no debounce (each hop on the export -> DNS answer path would gain
// 30 ms). The loop's own list-and-watch is a few lines with fixed retry delays.
import type { Clock } from '../../../base/clock/index.js';
import type { KindRef, KubeObject, ListOptions, ResourceStore, Watch } from '../../../platform/store/index.js';

export interface InformerHandlers {
  onList(items: KubeObject[]): void;
  onEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void;
  onError?(err: unknown): void;
}

export class Informer {
  private watch: Watch | undefined;
  private stopped = false;
  private failures = 0;
  private timer: { cancel(): void } | undefined;
  /** true once a list succeeded and the watch is running */
  synced = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly kind: KindRef,
    private readonly opts: ListOptions,
    private readonly handlers: InformerHandlers,
    private readonly clock: Clock,
  ) {}

  start(): void {
    void this.run();
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    try {
      const list = await this.store.list(this.kind, this.opts);
      if (this.stopped) return;
      this.handlers.onList(list.items);
      const w = this.store.watch(this.kind, { ...this.opts, resourceVersion: list.resourceVersion }, (ev) => this.handlers.onEvent(ev.type, ev.object));
      this.watch = w;
      this.synced = true;
      this.failures = 0;
      await w.done;
      if (this.stopped) return;
      this.retry();
    } catch (err) {
      this.synced = false;
      if (this.stopped) return;
      this.handlers.onError?.(err);
      this.retry();
    }
  }

  private retry(): void {
    this.synced = false;
    this.failures++;
    const delay = Math.min(2000, 50 * 2 ** Math.min(this.failures, 6));
    this.timer = this.clock.setTimeout(() => void this.run(), delay);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.watch?.stop();
  }
}

/** Keys to reconcile, each at most once in the queue; failed keys come back after a backoff. */
export class KeyQueue {
  private pending = new Set<string>();
  private running = false;
  private attempts = new Map<string, number>();
  private timers = new Map<string, { cancel(): void }>();
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly handler: (key: string) => Promise<void>,
    private readonly clock: Clock,
    private readonly onError: (key: string, err: unknown) => void,
  ) {}

  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    if (!this.running) void this.drain();
  }

  private later(key: string): void {
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    const delay = Math.min(5000, 25 * 2 ** Math.min(n, 8));
    this.timers.get(key)?.cancel();
    this.timers.set(key, this.clock.setTimeout(() => { this.timers.delete(key); this.add(key); }, delay));
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (!this.stopped && this.pending.size > 0) {
      // yield to the event loop between keys: an in-process store answers synchronously
      await new Promise<void>((r) => setImmediate(r));
      if (this.stopped || this.pending.size === 0) break;
      const key = this.pending.values().next().value as string;
      this.pending.delete(key);
      try {
        await this.handler(key);
        this.attempts.delete(key);
      } catch (err) {
        this.onError(key, err);
        this.later(key);
      }
    }
    this.running = false;
    if (this.timers.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves when nothing is queued, running or waiting for a retry (tests). */
  idle(): Promise<void> {
    if (!this.running && this.pending.size === 0 && this.timers.size === 0) return Promise.resolve();
    return new Promise((res) => this.idleWaiters.push(res));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    for (const w of this.idleWaiters.splice(0)) w();
  }
}
