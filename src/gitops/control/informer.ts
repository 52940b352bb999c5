// List + watch of one kind that survives the end of a watch: on STRAIT_ERR_WATCH_EXPIRED
// or a transport error it lists again (delivering the listed objects as MODIFIED) and
// watches from the new resourceVersion. Handlers get copies; never mutate them in place.
import type { Logger } from 'pino';
import type { KindRef, KubeObject, ListOptions, ResourceStore, Watch, WatchEvent } from '../../platform/store/index.js';

export interface Informer {
  stop(): void;
  /** resolves after the first list was delivered */
  readonly synced: Promise<void>;
}

export function watchKind<T extends KubeObject = KubeObject>(
  store: ResourceStore, kind: KindRef, opts: ListOptions, onEvent: (ev: WatchEvent<T>) => void, log?: Logger,
): Informer {
  let stopped = false;
  let current: Watch | undefined;
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((r) => { markSynced = r; });
  const run = async (delay: number): Promise<void> => {
    if (stopped) return;
    try {
      const list = await store.list<T>(kind, opts);
      for (const o of list.items) onEvent({ type: 'MODIFIED', object: o });
      markSynced();
      if (stopped) return;
      current = store.watch<T>(kind, { ...opts, resourceVersion: list.resourceVersion }, onEvent);
      await current.done;
      if (!stopped) setTimeout(() => void run(100), 100).unref();
    } catch (err) {
      if (stopped) return;
      log?.debug({ err, kind: kind.kind }, 'watch ended; listing again');
      const next = Math.min(delay * 2 || 100, 5000);
      setTimeout(() => void run(next), next).unref();
    }
  };
  void run(0);
  return {
    synced,
    stop() {
      stopped = true;
      current?.stop();
    },
  };
}
