// TEST-ONLY in-memory ResourceStore, used by the multicluster tests until the embedded
// store lands (then they switch to openEmbeddedStore). It can be switched "down" to
// simulate a broker outage: every call then fails with STRAIT_ERR_STORE_UNAVAILABLE and
// running watches end with that error.
import { E } from '../../src/base/errors/index.js';
import type {
  CoreEvent, KindRef, KubeObject, ListOptions, ObjectList, ResourceStore, Watch, WatchEvent, WatchOptions,
} from '../../src/control/store/index.js';

type Listener = { kind: string; opts: WatchOptions; fn: (ev: WatchEvent) => void; end: (err?: Error) => void };

const keyOf = (k: KindRef) => `${k.apiVersion}/${k.kind}`;

function matches(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  return selector.split(',').map((s) => s.trim()).filter(Boolean).every((term) => {
    if (term.startsWith('!')) return !(term.slice(1) in l);
    const ne = term.split('!=');
    if (ne.length === 2) return l[ne[0]!.trim()] !== ne[1]!.trim();
    const eq = term.split(/==?/);
    if (eq.length === 2) return l[eq[0]!.trim()] === eq[1]!.trim();
    return term in l;
  });
}

function merge(base: unknown, patch: unknown): unknown {
  if (patch === null) return undefined;
  if (typeof patch !== 'object' || Array.isArray(patch) || typeof base !== 'object' || base === null || Array.isArray(base)) return structuredClone(patch);
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    const m = merge(out[k], v);
    if (m === undefined) delete out[k];
    else out[k] = m;
  }
  return out;
}

export class MemoryStore implements ResourceStore {
  private objects = new Map<string, Map<string, KubeObject>>();
  private rv = 0;
  private listeners = new Set<Listener>();
  private history: { rv: number; kind: string; ev: WatchEvent }[] = [];
  down = false;
  events: CoreEvent[] = [];

  setDown(down: boolean): void {
    this.down = down;
    if (down) {
      for (const l of [...this.listeners]) l.end(E.storeUnavailable('memory', 'store is down'));
      this.listeners.clear();
    }
  }

  private check(): void {
    if (this.down) throw E.storeUnavailable('memory', 'store is down');
  }

  private bucket(kind: KindRef): Map<string, KubeObject> {
    let b = this.objects.get(keyOf(kind));
    if (!b) this.objects.set(keyOf(kind), (b = new Map()));
    return b;
  }

  private emit(kind: string, type: WatchEvent['type'], obj: KubeObject): void {
    const ev: WatchEvent = { type, object: structuredClone(obj) };
    this.history.push({ rv: this.rv, kind, ev });
    if (this.history.length > 5000) this.history.shift();
    for (const l of this.listeners) {
      if (l.kind !== kind) continue;
      if (l.opts.namespace !== undefined && obj.metadata.namespace !== l.opts.namespace) continue;
      if (!matches(obj.metadata.labels, l.opts.labelSelector)) continue;
      queueMicrotask(() => { if (this.listeners.has(l)) l.fn(structuredClone(ev)); });
    }
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    this.check();
    const o = this.bucket(kind).get(`${namespace ?? ''}/${name}`);
    return o ? (structuredClone(o) as T) : undefined;
  }

  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts: ListOptions = {}): Promise<ObjectList<T>> {
    this.check();
    const items = [...this.bucket(kind).values()]
      .filter((o) => opts.namespace === undefined || o.metadata.namespace === opts.namespace)
      .filter((o) => matches(o.metadata.labels, opts.labelSelector))
      .map((o) => structuredClone(o) as T);
    return { items, resourceVersion: String(this.rv) };
  }

  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const done = new Promise<void>((res, rej) => { resolve = res; reject = rej; });
    done.catch(() => undefined);
    const l: Listener = {
      kind: keyOf(kind), opts, fn: onEvent as (ev: WatchEvent) => void,
      end: (err) => (err ? reject(err) : resolve()),
    };
    if (this.down) {
      l.end(E.storeUnavailable('memory', 'store is down'));
      return { stop: () => undefined, done };
    }
    if (opts.resourceVersion !== undefined) {
      const from = Number(opts.resourceVersion);
      for (const h of this.history) {
        if (h.rv > from && h.kind === l.kind && (opts.namespace === undefined || h.ev.object.metadata.namespace === opts.namespace)
          && matches(h.ev.object.metadata.labels, opts.labelSelector)) {
          const ev = structuredClone(h.ev);
          queueMicrotask(() => { if (this.listeners.has(l)) l.fn(ev); });
        }
      }
    }
    this.listeners.add(l);
    return { stop: () => { this.listeners.delete(l); resolve(); }, done };
  }

  async apply<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.check();
    const b = this.bucket(obj);
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const prev = b.get(key);
    this.rv++;
    let next: KubeObject;
    if (prev) {
      const { status: _s, ...rest } = obj;
      next = merge(prev, rest) as KubeObject;
      next.metadata = { ...next.metadata, resourceVersion: String(this.rv) };
    } else {
      next = structuredClone(obj) as KubeObject;
      next.metadata = { ...next.metadata, resourceVersion: String(this.rv), uid: `uid-${this.rv}`, creationTimestamp: new Date().toISOString() };
    }
    b.set(key, next);
    this.emit(keyOf(obj), prev ? 'MODIFIED' : 'ADDED', next);
    return structuredClone(next) as T;
  }

  async update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.check();
    const b = this.bucket(obj);
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const prev = b.get(key);
    if (!prev) throw E.notFound(obj.kind, obj.metadata.name, obj.metadata.namespace);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== prev.metadata.resourceVersion) {
      throw E.conflict(obj.kind, obj.metadata.name, obj.metadata.resourceVersion, prev.metadata.resourceVersion ?? '');
    }
    this.rv++;
    const next = { ...structuredClone(obj), status: prev.status } as KubeObject;
    next.metadata = { ...prev.metadata, ...next.metadata, resourceVersion: String(this.rv) };
    b.set(key, next);
    this.emit(keyOf(obj), 'MODIFIED', next);
    return structuredClone(next) as T;
  }

  async updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.check();
    const b = this.bucket(obj);
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const prev = b.get(key);
    if (!prev) throw E.notFound(obj.kind, obj.metadata.name, obj.metadata.namespace);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== prev.metadata.resourceVersion) {
      throw E.conflict(obj.kind, obj.metadata.name, obj.metadata.resourceVersion, prev.metadata.resourceVersion ?? '');
    }
    this.rv++;
    const next = { ...prev, status: structuredClone(obj.status) } as KubeObject;
    next.metadata = { ...prev.metadata, resourceVersion: String(this.rv) };
    b.set(key, next);
    this.emit(keyOf(obj), 'MODIFIED', next);
    return structuredClone(next) as T;
  }

  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    this.check();
    const b = this.bucket(kind);
    const key = `${namespace ?? ''}/${name}`;
    const prev = b.get(key);
    if (!prev) return false;
    b.delete(key);
    this.rv++;
    this.emit(keyOf(kind), 'DELETED', prev);
    return true;
  }

  async recordEvent(ev: CoreEvent): Promise<void> {
    this.check();
    this.events.push(ev);
  }

  async close(): Promise<void> {
    for (const l of this.listeners) l.end();
    this.listeners.clear();
  }
}
