// One coalescing reconcile loop over watched kinds, shared by the world's cluster sync and
// pod runtime: every watch event schedules a run (debounced 30 ms); a run that is already
// going is followed by one more; a failed run retries after 200 ms; a watch that ends is
// re-listed and restarted. `settled()` resolves after the next run that ends cleanly.
// The multicluster Informer (src/multicluster/control/clusterset/informer.ts) is the per-object kind:
// it hands each event's object to a keyed queue; this loop only needs "something changed".
import type { KindRef, ResourceStore, Watch } from '../../platform/store/index.js';

export interface ReconcileLoop {
  settled(): Promise<void>;
  stop(): void;
}

export function startReconcileLoop(store: ResourceStore, kinds: KindRef[], reconcile: () => Promise<void>, onError: (err: unknown) => void): ReconcileLoop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const waiters: (() => void)[] = [];
  const watches: Watch[] = [];

  function schedule(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      running = reconcile().catch((err: unknown) => {
        onError(err);
        again = true;
      }).finally(() => {
        running = undefined;
        if (again) {
          again = false;
          setTimeout(schedule, 200);
        } else {
          for (const w of waiters.splice(0)) w();
        }
      });
    }, 30);
  }

  function watchKind(kind: KindRef): void {
    if (stopped) return;
    void store.list(kind).then((list) => {
      if (stopped) return;
      const w = store.watch(kind, { resourceVersion: list.resourceVersion }, () => schedule());
      watches.push(w);
      w.done.then(() => undefined, () => undefined).finally(() => {
        if (!stopped) setTimeout(() => { watchKind(kind); schedule(); }, 500);
      });
    }, () => { if (!stopped) setTimeout(() => watchKind(kind), 1000); });
  }

  for (const k of kinds) watchKind(k);
  schedule();
  return {
    settled: () => new Promise<void>((resolve) => { waiters.push(resolve); schedule(); }),
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const w of watches) w.stop();
    },
  };
}
