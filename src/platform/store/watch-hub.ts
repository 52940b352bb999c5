// In-process watch fan-out shared by the embedded store: each watcher has a queue that
// is drained in order on a microtask, so a callback never runs inside a write.
import type { KubeObject, Watch, WatchEvent, WatchEventType } from './types.js';
import { matchesSelector, type Requirement } from './selector.js';

/** One change as the store records it. */
export interface Change {
  rv: number;
  kind: string;
  namespace: string;
  type: WatchEventType;
  /** labels before the change (undefined for ADDED) */
  oldLabels: Record<string, string> | undefined;
  /** the object after the change (for DELETED: its last state) as JSON text */
  body: string;
}

/**
 * The event a watcher with a label selector sees for a change: an object that stops
 * matching is DELETED for it, one that starts matching is ADDED (as Kubernetes does).
 */
export function eventTypeFor(reqs: Requirement[], ch: Change, newLabels: Record<string, string> | undefined): WatchEventType | undefined {
  if (reqs.length === 0) return ch.type;
  const nowMatch = ch.type !== 'DELETED' && matchesSelector(reqs, newLabels);
  if (ch.type === 'ADDED') return nowMatch ? 'ADDED' : undefined;
  const wasMatch = matchesSelector(reqs, ch.oldLabels);
  if (ch.type === 'DELETED') return wasMatch ? 'DELETED' : undefined;
  if (wasMatch && nowMatch) return 'MODIFIED';
  if (nowMatch) return 'ADDED';
  if (wasMatch) return 'DELETED';
  return undefined;
}

export class Watcher implements Watch {
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (err: unknown) => void;
  private queue: WatchEvent[] = [];
  private scheduled = false;
  stopped = false;

  constructor(
    readonly kind: string,
    readonly namespace: string | undefined,
    readonly reqs: Requirement[],
    private readonly onEvent: (ev: WatchEvent) => void,
    private readonly onStop: (w: Watcher) => void,
  ) {
    this.done = new Promise<void>((res, rej) => {
      this.resolveDone = res;
      this.rejectDone = rej;
    });
    // a watch nobody awaits must not become an unhandled rejection
    this.done.catch(() => undefined);
  }

  /** Offer a change; queued when it concerns this watcher. */
  offer(ch: Change): void {
    if (this.stopped || ch.kind !== this.kind) return;
    if (this.namespace !== undefined && ch.namespace !== this.namespace) return;
    const object = JSON.parse(ch.body) as KubeObject;
    const type = eventTypeFor(this.reqs, ch, object.metadata.labels);
    if (type === undefined) return;
    this.push({ type, object });
  }

  push(ev: WatchEvent): void {
    if (this.stopped) return;
    this.queue.push(ev);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.drain());
    }
  }

  private drain(): void {
    this.scheduled = false;
    const q = this.queue;
    this.queue = [];
    for (const ev of q) {
      if (this.stopped) return;
      try {
        this.onEvent(ev);
      } catch (err) {
        this.fail(err);
        return;
      }
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue = [];
    this.onStop(this);
    this.resolveDone();
  }

  fail(err: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue = [];
    this.onStop(this);
    this.rejectDone(err);
  }
}
