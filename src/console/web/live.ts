// The console's live copy of the stores: one server-sent-event stream of the store API
// (/v1/stream) carrying the list-then-watch of every (cluster, kind) the views show. The
// browser reconnects by itself; every reconnect starts with fresh lists.
import type { Obj } from './api';
import { CONFIG } from './config';
import { rateOf, type CounterReading, type Rate } from './rates';

export type { Rate } from './rates';

export interface WatchSpec {
  cluster: string;
  kind: string;
}

type Msg =
  | { type: 'LIST'; watch: number; items: Obj[] }
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; watch: number; object: Obj }
  | { type: 'ERROR'; watch: number; error: { code: string; message: string } };

/** closed: the server refused the stream (a session that expired): the page checks the session */
export type LiveState = 'connecting' | 'live' | 'reconnecting' | 'closed';

const keyOf = (o: Obj): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class Live {
  private readonly sets = new Map<string, Map<string, Obj>>();
  private readonly errors = new Map<string, string>();
  private readonly counters = new Map<string, { tx: number; rx: number; at: number }>();
  private readonly rates = new Map<string, Rate>();
  private readonly listeners = new Set<() => void>();
  private source: EventSource | undefined;
  private pending: ReturnType<typeof setTimeout> | undefined;
  state: LiveState = 'connecting';
  /** bumped on every change: views compare it to know they are stale */
  version = 0;

  constructor(readonly watches: WatchSpec[]) {}

  start(): void {
    this.source?.close();
    this.state = 'connecting';
    const p = new URLSearchParams();
    for (const w of this.watches) p.append('watch', `${w.cluster},${CONFIG.kinds[w.kind] ?? 'v1'},${w.kind}`);
    const es = new EventSource(`/v1/stream?${p.toString()}`);
    this.source = es;
    es.onopen = () => {
      this.state = 'live';
      this.changed();
    };
    // the browser retries a dropped stream by itself; a refused one (401) it closes
    es.onerror = () => {
      this.state = es.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting';
      this.changed();
    };
    es.onmessage = (ev: MessageEvent<string>) => {
      let msg: Msg;
      try {
        msg = JSON.parse(ev.data) as Msg;
      } catch {
        return;
      }
      this.apply(msg);
    };
  }

  stop(): void {
    this.source?.close();
    this.source = undefined;
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** the objects of one kind in one cluster (each object is the store's: do not change it) */
  list(cluster: string, kind: string): Obj[] {
    return [...(this.sets.get(`${cluster}/${kind}`)?.values() ?? [])];
  }

  /** the error of the last attempt to follow a kind (the server retries), if any */
  error(cluster: string, kind: string): string | undefined {
    return this.errors.get(`${cluster}/${kind}`);
  }

  /** whether a first list of this kind arrived */
  has(cluster: string, kind: string): boolean {
    return this.sets.has(`${cluster}/${kind}`);
  }

  rate(cluster: string, gateway: string, peer: string): Rate | undefined {
    return this.rates.get(`${cluster}/${gateway}/${peer}`);
  }

  private apply(msg: Msg): void {
    const w = this.watches[msg.watch];
    if (!w) return;
    const key = `${w.cluster}/${w.kind}`;
    if (msg.type === 'ERROR') {
      this.errors.set(key, msg.error.message);
    } else if (msg.type === 'LIST') {
      this.errors.delete(key);
      this.sets.set(key, new Map(msg.items.map((o) => [keyOf(o), o])));
      if (w.kind === 'Gateway') for (const o of msg.items) this.sample(w.cluster, o);
    } else {
      let set = this.sets.get(key);
      if (!set) this.sets.set(key, (set = new Map()));
      if (msg.type === 'DELETED') set.delete(keyOf(msg.object));
      else set.set(keyOf(msg.object), msg.object);
      if (w.kind === 'Gateway' && msg.type !== 'DELETED') this.sample(w.cluster, msg.object);
    }
    this.changed();
  }

  /**
   * Throughput from the gateway's counters (txBytes, rxBytes per connection) over the times
   * they were read (countersAt), never over the times this page received them: the rate the
   * publisher computed (txBps, rxBps, from its first complete window on), else the delta of
   * two readings this page saw. No reading time, no rate.
   */
  private sample(cluster: string, gw: Obj): void {
    const st = (gw.status ?? {}) as { node?: string; connections?: CounterReading[] };
    for (const c of st.connections ?? []) {
      if (!c.cluster) continue;
      const k = `${cluster}/${st.node ?? gw.metadata.name}/${c.cluster}`;
      const r = rateOf(c, this.counters.get(k));
      if (typeof c.txBytes === 'number' && typeof c.rxBytes === 'number' && c.countersAt)
        this.counters.set(k, { tx: c.txBytes, rx: c.rxBytes, at: Date.parse(c.countersAt) });
      if (r) this.rates.set(k, r);
    }
  }

  private changed(): void {
    this.version++;
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      for (const l of this.listeners) l();
    }, 16);
  }
}

/** What the views watch: per cluster its objects, the home cluster's GitOps, the broker's records. */
export function watchesFor(clusters: string[]): WatchSpec[] {
  const out: WatchSpec[] = [];
  for (const c of clusters) {
    if (c === 'broker') {
      for (const kind of ['Cluster', 'ServiceImport', 'Endpoint', 'Event']) out.push({ cluster: c, kind });
      continue;
    }
    for (const kind of [
      'Node',
      'Pod',
      'Service',
      'ServiceExport',
      'ServiceImport',
      'Gateway',
      'Endpoint',
      'Cluster',
      'Namespace',
      'PeerAuthentication',
      'MeshTrafficObservation',
    ]) {
      out.push({ cluster: c, kind });
    }
    if (c === CONFIG.home) for (const kind of ['Application', 'AppProject']) out.push({ cluster: c, kind });
  }
  return out;
}
