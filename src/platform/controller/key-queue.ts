// Keys to reconcile, each at most once in the queue and never two runs of one key at a
// time; up to `concurrency` keys run together. The handler says what comes next: nothing
// (done, or stalled: retrying will not help), { afterMs } (waiting: look again after a
// fixed delay), or 'backoff' (transient: retry with the backoff policy; a throw is the
// same). Between two keys the queue yields to the event loop: an in-process store answers
// synchronously, and the I/O that waited must get its turn.
import { systemClock, type Clock } from '../../base/clock/index.js';
import { DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from './backoff.js';

export type Requeue = void | undefined | 'backoff' | { afterMs: number };

export interface KeyQueueOptions {
  clock?: Clock;
  backoff?: BackoffPolicy;
  /** keys running at once (default 1) */
  concurrency?: number;
  /** a handler threw (the key is retried with the backoff) */
  onError?(key: string, err: unknown): void;
}

export class KeyQueue {
  private readonly pending = new Set<string>();
  private readonly running = new Set<string>();
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Map<string, { cancel(): void }>();
  private idleWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private kicked = false;
  private stopped = false;
  private readonly clock: Clock;
  private readonly backoff: BackoffPolicy;
  private readonly concurrency: number;

  constructor(
    private readonly handler: (key: string) => Promise<Requeue>,
    private readonly o: KeyQueueOptions = {},
  ) {
    this.clock = o.clock ?? systemClock;
    this.backoff = o.backoff ?? DEFAULT_BACKOFF;
    this.concurrency = Math.max(1, o.concurrency ?? 1);
  }

  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    this.kick();
  }

  /** Keys queued, not counting those running or waiting for a retry. */
  get queued(): number {
    return this.pending.size;
  }

  private kick(): void {
    if (this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      this.pump();
    });
  }

  private pump(): void {
    for (const key of this.pending) {
      if (this.stopped || this.running.size >= this.concurrency) break;
      if (this.running.has(key)) continue;
      this.pending.delete(key);
      this.running.add(key);
      void this.work(key);
    }
  }

  private async work(key: string): Promise<void> {
    let next: Requeue;
    try {
      next = await this.handler(key);
    } catch (err) {
      this.o.onError?.(key, err);
      next = 'backoff';
    }
    this.running.delete(key);
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
    if (!this.stopped && next === 'backoff') {
      const n = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, n);
      this.retryAfter(key, backoffDelay(n, this.backoff));
    } else {
      this.attempts.delete(key);
      if (!this.stopped && typeof next === 'object') this.retryAfter(key, next.afterMs);
    }
    if (this.pending.size > 0) this.kick();
    this.notify();
  }

  private retryAfter(key: string, ms: number): void {
    this.timers.set(
      key,
      this.clock.setTimeout(() => {
        this.timers.delete(key);
        this.add(key);
      }, ms),
    );
  }

  private notify(): void {
    if (this.pending.size > 0 || this.running.size > 0) return;
    for (const w of this.drainWaiters.splice(0)) w();
    if (this.timers.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves when nothing is queued or running (retries may still be waiting). */
  drained(): Promise<void> {
    if (this.pending.size === 0 && this.running.size === 0) return Promise.resolve();
    return new Promise((res) => this.drainWaiters.push(res));
  }

  /** Resolves when nothing is queued, running or waiting for a retry. */
  idle(): Promise<void> {
    if (this.pending.size === 0 && this.running.size === 0 && this.timers.size === 0) return Promise.resolve();
    return new Promise((res) => this.idleWaiters.push(res));
  }

  stop(): void {
    this.stopped = true;
    this.pending.clear();
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    for (const w of [...this.idleWaiters.splice(0), ...this.drainWaiters.splice(0)]) w();
  }
}
