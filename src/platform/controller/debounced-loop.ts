// One coalescing reconcile loop: schedule() runs `run` after `debounceMs` of quiet; a
// schedule() while it runs is one more run afterwards; a failed run is retried with the
// backoff policy (a schedule() in between runs it sooner). settled() resolves after the
// next run that ends cleanly with nothing more asked for.
// reconcileOnChange() feeds it from informers: any event or (re)list of the given kinds.
import { systemClock, type Clock } from '../../base/clock/index.js';
import type { KindRef, ResourceStore } from '../store/index.js';
import { DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from './backoff.js';
import { Informer } from './informer.js';

export interface DebouncedLoopOptions {
  /** quiet time before a run (default 30 ms) */
  debounceMs?: number;
  backoff?: BackoffPolicy;
  clock?: Clock;
  /** a run failed; it is retried after the backoff */
  onError?(err: unknown): void;
}

export class DebouncedLoop {
  private debounce: NodeJS.Timeout | undefined;
  private retry: { cancel(): void } | undefined;
  private running = false;
  private again = false;
  private failures = 0;
  private stopped = false;
  private waiters: (() => void)[] = [];
  private readonly clock: Clock;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly o: DebouncedLoopOptions = {},
  ) {
    this.clock = o.clock ?? systemClock;
  }

  schedule(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.runOnce(), this.o.debounceMs ?? 30);
  }

  private runOnce(): void {
    this.debounce = undefined;
    this.retry?.cancel();
    this.retry = undefined;
    this.running = true;
    this.again = false;
    this.run()
      .then(
        () => {
          this.failures = 0;
          return true;
        },
        (err: unknown) => {
          this.failures++;
          this.o.onError?.(err);
          return false;
        },
      )
      .then((ok) => {
        this.running = false;
        if (this.stopped) return;
        if (!ok) this.retry = this.clock.setTimeout(() => this.schedule(), backoffDelay(this.failures, this.o.backoff ?? DEFAULT_BACKOFF));
        else if (this.again) this.schedule();
        else for (const w of this.waiters.splice(0)) w();
      });
  }

  /** Asks for a run and resolves after the next one that ends cleanly. */
  settled(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      this.schedule();
    });
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.debounce);
    this.retry?.cancel();
  }
}

export interface ReconcileLoop {
  schedule(): void;
  settled(): Promise<void>;
  stop(): void;
}

/** A kind to follow, optionally only its objects that match a label selector. */
export type WatchedKind = KindRef | { kind: KindRef; labelSelector: string };

/**
 * A DebouncedLoop run on every event and every (re)list of `kinds` (all namespaces), and
 * once at start. A kind given with a label selector wakes the loop only for the objects it
 * selects (a reconcile that reads only those need not run for the others).
 */
export function reconcileOnChange(store: ResourceStore, kinds: readonly WatchedKind[], run: () => Promise<void>, o: DebouncedLoopOptions = {}): ReconcileLoop {
  const loop = new DebouncedLoop(run, o);
  const schedule = (): void => loop.schedule();
  const informers = kinds.map((k) =>
    new Informer(
      store,
      'labelSelector' in k ? k.kind : k,
      'labelSelector' in k ? { labelSelector: k.labelSelector } : {},
      { onList: schedule, onEvent: schedule },
      { ...(o.clock ? { clock: o.clock } : {}), ...(o.backoff ? { backoff: o.backoff } : {}) },
    ).start(),
  );
  loop.schedule();
  return {
    schedule,
    settled: () => loop.settled(),
    stop() {
      loop.stop();
      for (const i of informers) i.stop();
    },
  };
}
