// An in-memory ResourceStore for tests of controllers before (and besides) the
// embedded store. Same contract: apply = create or JSON-merge spec/metadata/data
// (status kept); update/updateStatus check resourceVersion when set; watch replays
// changes after a resourceVersion.
import { E } from '../../src/base/errors/index.js';
import type {
  ApplyOptions,
  CoreEvent,
  KindRef,
  KubeObject,
  ListOptions,
  ObjectList,
  ResourceStore,
  Watch,
  WatchEvent,
  WatchOptions,
} from '../../src/platform/store/index.js';

const keyOf = (k: KindRef, name: string, ns?: string): string => `${k.apiVersion}|${k.kind}|${ns ?? ''}|${name}`;

function merge(base: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = base && typeof base === 'object' && !Array.isArray(base) ? { ...(base as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

export class MemoryStore implements ResourceStore {
  private rv = 0;
  private readonly objects = new Map<string, KubeObject>();
  private readonly history: { rv: number; ev: WatchEvent }[] = [];
  private readonly watchers = new Set<{ kind: KindRef; ns?: string; fn: (ev: WatchEvent) => void }>();
  readonly events: CoreEvent[] = [];
  writes = 0;

  private emit(type: WatchEvent['type'], obj: KubeObject): void {
    const ev = { type, object: structuredClone(obj) };
    this.history.push({ rv: Number(obj.metadata.resourceVersion), ev });
    if (this.history.length > 100_000) this.history.splice(0, 50_000);
    for (const w of this.watchers) {
      if (w.kind.kind !== obj.kind || w.kind.apiVersion !== obj.apiVersion) continue;
      if (w.ns !== undefined && w.ns !== obj.metadata.namespace) continue;
      const copy = structuredClone(ev);
      queueMicrotask(() => w.fn(copy));
    }
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    const o = this.objects.get(keyOf(kind, name, namespace));
    return o ? (structuredClone(o) as T) : undefined;
  }

  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const items = [...this.objects.values()].filter(
      (o) => o.kind === kind.kind && o.apiVersion === kind.apiVersion && (opts.namespace === undefined || o.metadata.namespace === opts.namespace),
    );
    return { items: structuredClone(items) as T[], resourceVersion: String(this.rv) };
  }

  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    const w = { kind, ...(opts.namespace !== undefined ? { ns: opts.namespace } : {}), fn: onEvent as (ev: WatchEvent) => void };
    const from = Number(opts.resourceVersion ?? this.rv);
    for (const h of this.history) {
      if (h.rv > from && h.ev.object.kind === kind.kind && (opts.namespace === undefined || h.ev.object.metadata.namespace === opts.namespace)) {
        const copy = structuredClone(h.ev) as WatchEvent<T>;
        queueMicrotask(() => onEvent(copy));
      }
    }
    this.watchers.add(w);
    let end: () => void = () => undefined;
    const done = new Promise<void>((r) => {
      end = r;
    });
    return {
      done,
      stop: () => {
        this.watchers.delete(w);
        end();
      },
    };
  }

  private put(obj: KubeObject, type: WatchEvent['type']): KubeObject {
    this.rv++;
    this.writes++;
    obj.metadata.resourceVersion = String(this.rv);
    this.objects.set(keyOf(obj, obj.metadata.name, obj.metadata.namespace), obj);
    this.emit(type, obj);
    return structuredClone(obj);
  }

  async apply<T extends KubeObject = KubeObject>(obj: T, _opts?: ApplyOptions): Promise<T> {
    const k = keyOf(obj, obj.metadata.name, obj.metadata.namespace);
    const old = this.objects.get(k);
    if (!old) {
      const created = structuredClone(obj) as KubeObject;
      delete created.status;
      created.metadata = { ...created.metadata, uid: `uid-${this.rv + 1}`, generation: 1, creationTimestamp: new Date().toISOString() };
      return this.put(created, 'ADDED') as T;
    }
    const { status: _s, metadata, ...rest } = structuredClone(obj);
    const next = merge(old, { ...rest, metadata: { ...metadata, resourceVersion: undefined } }) as KubeObject;
    next.status = old.status;
    if (JSON.stringify(next.spec) !== JSON.stringify(old.spec)) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
    return this.put(next, 'MODIFIED') as T;
  }

  /** The stored object `obj` replaces: NotFound when there is none, Conflict when obj names another resourceVersion. */
  private replaced(obj: KubeObject): KubeObject {
    const old = this.objects.get(keyOf(obj, obj.metadata.name, obj.metadata.namespace));
    if (!old) throw E.notFound(obj.kind, obj.metadata.name, obj.metadata.namespace);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion) {
      throw E.conflict(obj.kind, obj.metadata.name, obj.metadata.resourceVersion, old.metadata.resourceVersion ?? '');
    }
    return old;
  }

  async update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    const old = this.replaced(obj);
    const next = structuredClone(obj) as KubeObject;
    next.status = old.status;
    next.metadata = { ...next.metadata, uid: old.metadata.uid as string };
    return this.put(next, 'MODIFIED') as T;
  }

  async updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    const old = this.replaced(obj);
    return this.put({ ...structuredClone(old), status: structuredClone(obj.status) }, 'MODIFIED') as T;
  }

  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    const k = keyOf(kind, name, namespace);
    const old = this.objects.get(k);
    if (!old) return false;
    this.objects.delete(k);
    this.rv++;
    old.metadata.resourceVersion = String(this.rv);
    this.emit('DELETED', old);
    return true;
  }

  async recordEvent(ev: CoreEvent): Promise<void> {
    this.events.push(structuredClone(ev));
    const ns = ev.involvedObject.namespace || 'default';
    const name = `${ev.involvedObject.name}.${ev.reason.toLowerCase()}`;
    const old = this.objects.get(keyOf({ apiVersion: 'v1', kind: 'Event' }, name, ns));
    const next: KubeObject = old
      ? { ...structuredClone(old), message: ev.message, type: ev.type, count: Number(old['count'] ?? 1) + 1 }
      : {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace: ns },
          involvedObject: ev.involvedObject,
          reason: ev.reason,
          message: ev.message,
          type: ev.type,
          count: 1,
        };
    this.put(next, old ? 'MODIFIED' : 'ADDED');
  }

  async close(): Promise<void> {
    this.watchers.clear();
  }
}
