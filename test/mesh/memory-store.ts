// A small in-memory ResourceStore for the mesh controller's tests until the embedded store
// lands (issue 2): get/list/watch/apply/delete with resourceVersions and creationTimestamps.
import type { ApplyOptions, CoreEvent, KindRef, KubeObject, ListOptions, ObjectList, ResourceStore, Watch, WatchEvent, WatchOptions } from '../../src/control/store/index.js';

type Listener = { kind: string; ns?: string; fn: (ev: WatchEvent) => void };

export class MemoryStore implements ResourceStore {
  private objects = new Map<string, KubeObject>();
  private rv = 0;
  private listeners = new Set<Listener>();
  private key = (kind: string, name: string, ns?: string) => `${kind}/${ns ?? ''}/${name}`;

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    const o = this.objects.get(this.key(kind.kind, name, namespace));
    return o ? structuredClone(o) as T : undefined;
  }
  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts: ListOptions = {}): Promise<ObjectList<T>> {
    const items = [...this.objects.values()].filter((o) => o.kind === kind.kind && (opts.namespace === undefined || o.metadata.namespace === opts.namespace));
    return { items: structuredClone(items) as T[], resourceVersion: String(this.rv) };
  }
  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    const l: Listener = { kind: kind.kind, ...(opts.namespace ? { ns: opts.namespace } : {}), fn: onEvent as (ev: WatchEvent) => void };
    this.listeners.add(l);
    let end: () => void = () => {};
    const done = new Promise<void>((r) => { end = r; });
    return { stop: () => { this.listeners.delete(l); end(); }, done };
  }
  private emit(type: WatchEvent['type'], o: KubeObject): void {
    for (const l of this.listeners) if (l.kind === o.kind && (l.ns === undefined || l.ns === o.metadata.namespace)) l.fn({ type, object: structuredClone(o) });
  }
  async apply<T extends KubeObject = KubeObject>(obj: T, _opts?: ApplyOptions): Promise<T> {
    const k = this.key(obj.kind, obj.metadata.name, obj.metadata.namespace);
    const old = this.objects.get(k);
    const next = structuredClone(obj) as KubeObject;
    next.metadata = { ...next.metadata, resourceVersion: String(++this.rv), creationTimestamp: old?.metadata.creationTimestamp ?? next.metadata.creationTimestamp ?? new Date(Date.now() + this.rv).toISOString() };
    this.objects.set(k, next);
    this.emit(old ? 'MODIFIED' : 'ADDED', next);
    return structuredClone(next) as T;
  }
  async update<T extends KubeObject = KubeObject>(obj: T): Promise<T> { return this.apply(obj); }
  async updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> { return this.apply(obj); }
  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    const k = this.key(kind.kind, name, namespace);
    const o = this.objects.get(k);
    if (!o) return false;
    this.objects.delete(k);
    this.rv++;
    this.emit('DELETED', o);
    return true;
  }
  async recordEvent(_ev: CoreEvent): Promise<void> {}
  async close(): Promise<void> { this.listeners.clear(); }
}
