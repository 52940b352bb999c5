// The embedded ResourceStore: SQLite (better-sqlite3) in WAL mode with synchronous=FULL,
// a monotonic resourceVersion, a bounded change log for watches, and in-process fan-out.
import Database from 'better-sqlite3';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { E, isStraitError } from '../../../base/errors/index.js';
import { checkStoredObject } from '../../resources/index.js';
import { jsonEqual, mergePatch } from '../merge-patch.js';
import { checkObjectShape, effectiveNamespace, kindKey, namespaceFilter } from '../object-key.js';
import { matchesSelector, parseSelector } from '../selector.js';
import type { ApplyOptions, CoreEvent, KindRef, KubeObject, ListOptions, ObjectList, ResourceStore, Watch, WatchEvent, WatchOptions } from '../types.js';
import { Watcher, type Change } from '../watch-hub.js';
import { inStorageVersion, inVersion } from '../versions.js';
import { SCHEMA, SCHEMA_VERSION } from './schema.js';

export interface EmbeddedStoreOptions {
  /** directory holding the store's database (store.db); created when missing */
  dir: string;
  /** how many changes the log keeps for watches (default 10000); older resourceVersions are "too old" */
  historyLimit?: number;
  /** Events whose lastTimestamp is older than this are deleted (default 3600, as Kubernetes' event TTL) */
  eventTtlSeconds?: number;
  /**
   * Checks that need the rest of the store (e.g. a ClusterIP must be free), run on every
   * create or spec change after the schema check, in the same synchronous step as the
   * write: nothing can slip in between. An admission may fill in fields of `next`
   * (allocate a ClusterIP) or throw a StraitError to refuse the write.
   */
  admit?: Admission;
}

/** See EmbeddedStoreOptions.admit. `peers` lists the stored objects of a kind (staged writes included). */
export type Admission = (next: KubeObject, old: KubeObject | undefined, peers: (kind: KindRef) => KubeObject[]) => void;

const SYSTEM_METADATA = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields', 'selfLink'] as const;

const EVENT_KEY = kindKey({ apiVersion: 'v1', kind: 'Event' });

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

type Stmt = Database.Statement;

interface Row {
  rv: number;
  body: string;
}

/** Object content that makes the generation move: everything but metadata and status. */
function specPart(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

function stripSystemMetadata(o: KubeObject): KubeObject {
  const md: Record<string, unknown> = { ...o.metadata };
  for (const k of SYSTEM_METADATA) delete md[k];
  return { ...o, metadata: md as unknown as KubeObject['metadata'] };
}

function parseRv(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d{1,15}$/.test(rv))
    throw E.usage(`resourceVersion ${JSON.stringify(rv)} is not a number; use the value a list or get returned`, { resourceVersion: rv });
  return Number(rv);
}

export class EmbeddedStore implements ResourceStore {
  private readonly db: Database.Database;
  private readonly where: string;
  private readonly historyLimit: number;
  private readonly eventTtlMs: number;
  private readonly admission: Admission | undefined;
  private lastEventPrune = 0;
  private rv: number;
  private compacted: number;
  private closed = false;
  private readonly watchers = new Set<Watcher>();
  /** writes staged in the open transaction, acknowledged when it commits */
  private group: { change: Change | undefined; what: string; resolve: () => void; reject: (err: unknown) => void }[] | undefined;
  private readonly s: Record<'get' | 'listKind' | 'listNs' | 'upsert' | 'del' | 'change' | 'setMeta' | 'since' | 'prune' | 'oldEvents', Stmt>;

  constructor(opts: EmbeddedStoreOptions) {
    const dir = resolve(opts.dir);
    this.where = dir;
    this.historyLimit = Math.max(1, Math.floor(opts.historyLimit ?? 10000));
    this.eventTtlMs = Math.max(1, opts.eventTtlSeconds ?? 3600) * 1000;
    this.admission = opts.admit;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw E.fileUnreadable(dir, (err as Error).message);
    }
    const file = join(dir, 'store.db');
    try {
      this.db = new Database(file, { timeout: 0 });
      // one process owns a store dir: others reach it through the store API
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.exec('BEGIN EXCLUSIVE; COMMIT;');
      this.db.exec(SCHEMA);
    } catch (err) {
      throw E.storeUnavailable(file, `cannot open the database (${(err as Error).message}); another process may hold this store dir`);
    }
    const meta = new Map((this.db.prepare('SELECT key, value FROM meta').all() as { key: string; value: number }[]).map((r) => [r.key, r.value]));
    if (meta.get('schema') !== SCHEMA_VERSION) throw E.storeUnavailable(file, `database schema ${meta.get('schema')} is not ${SCHEMA_VERSION}`);
    this.rv = meta.get('rv') ?? 0;
    this.compacted = meta.get('compacted') ?? 0;
    const p = (sql: string): Stmt => this.db.prepare(sql);
    this.s = {
      get: p('SELECT rv, body FROM objects WHERE kind = ? AND namespace = ? AND name = ?'),
      listKind: p('SELECT rv, body FROM objects WHERE kind = ? ORDER BY namespace, name'),
      listNs: p('SELECT rv, body FROM objects WHERE kind = ? AND namespace = ? ORDER BY name'),
      upsert: p(`INSERT INTO objects (kind, namespace, name, rv, body) VALUES (?, ?, ?, ?, ?)
                 ON CONFLICT (kind, namespace, name) DO UPDATE SET rv = excluded.rv, body = excluded.body`),
      del: p('DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?'),
      change: p('INSERT INTO changes (rv, kind, namespace, type, old_labels, body) VALUES (?, ?, ?, ?, ?, ?)'),
      setMeta: p('UPDATE meta SET value = ? WHERE key = ?'),
      since: p('SELECT rv, namespace, type, old_labels AS oldLabels, body FROM changes WHERE kind = ? AND rv > ? ORDER BY rv'),
      prune: p('DELETE FROM changes WHERE rv <= ?'),
      oldEvents: p("SELECT namespace, name, body FROM objects WHERE kind = ? AND json_extract(body, '$.lastTimestamp') < ?"),
    };
  }

  private open(): void {
    if (this.closed) throw E.storeUnavailable(this.where, 'the store was closed');
  }

  /**
   * Every object is checked against its kind's schema and rules before it is stored,
   * whichever path wrote it (CLI, store API, GitOps, broker sync, a controller), then
   * admitted. Synchronous, so that the check and the write it guards are one step.
   */
  private admit(next: KubeObject, old: KubeObject | undefined, spec: boolean): void {
    checkStoredObject(next);
    if (spec && this.admission) {
      this.admission(next, old, (kind) => (this.s.listKind.all(kindKey(kind)) as Row[]).map((r) => JSON.parse(r.body) as KubeObject));
      checkStoredObject(next);
    }
  }

  /** Before a read: commit what is staged, so reads only ever see durable state. */
  private readable(): void {
    this.open();
    if (this.group) this.flush();
  }

  private read(key: string, ns: string, name: string): KubeObject | undefined {
    const row = this.s.get.get(key, ns, name) as Row | undefined;
    return row ? (JSON.parse(row.body) as KubeObject) : undefined;
  }

  /**
   * Stage one change inside the open group transaction (opening one if needed) and
   * return a promise that resolves with the stored object once the transaction has
   * committed, i.e. once the write is durable. Writes issued in the same turn of the
   * event loop share one commit (one fsync): group commit. Later operations see staged
   * changes, so order is kept; reads commit the open group first, so nothing that is
   * not durable is ever visible.
   */
  private commit(key: string, ns: string, name: string, type: Change['type'], obj: KubeObject, old: KubeObject | undefined): Promise<KubeObject> {
    const rv = this.rv + 1;
    obj.metadata.resourceVersion = String(rv);
    const body = JSON.stringify(obj);
    const oldLabels = old?.metadata.labels ? JSON.stringify(old.metadata.labels) : null;
    let compactTo = 0;
    if (rv - this.compacted > this.historyLimit + Math.max(1, Math.floor(this.historyLimit / 10))) compactTo = rv - this.historyLimit;
    if (!this.group) {
      this.db.exec('BEGIN IMMEDIATE');
      this.group = [];
      setImmediate(() => this.flush());
    }
    const what = `${type === 'DELETED' ? 'the delete of' : type === 'ADDED' ? 'the create of' : 'the change to'} ${obj.kind} ${ns ? `${ns}/` : ''}${name}`;
    this.db.exec('SAVEPOINT w');
    try {
      if (type === 'DELETED') this.s.del.run(key, ns, name);
      else this.s.upsert.run(key, ns, name, rv, body);
      this.s.change.run(rv, key, ns, type, oldLabels, body);
      this.s.setMeta.run(rv, 'rv');
      if (compactTo > 0) {
        this.s.prune.run(compactTo);
        this.s.setMeta.run(compactTo, 'compacted');
      }
      this.db.exec('RELEASE w');
    } catch (err) {
      if (this.db.inTransaction) {
        this.db.exec('ROLLBACK TO w');
        this.db.exec('RELEASE w');
      } else {
        // SQLite rolled the whole transaction back (it may on SQLITE_FULL): the writes staged before this one went with it
        this.failGroup(err);
      }
      return Promise.reject(this.writeError(err, what, 'write failed'));
    }
    this.rv = rv;
    if (compactTo > 0) this.compacted = compactTo;
    const change: Change = { rv, kind: key, namespace: ns, type, oldLabels: old?.metadata.labels, body };
    return new Promise<KubeObject>((resolve, reject) => {
      this.group!.push({ change, what, resolve: () => resolve(JSON.parse(body) as KubeObject), reject });
    });
  }

  /**
   * A write that failed: ENOSPC (SQLite's SQLITE_FULL) is STRAIT_ERR_STORE_FULL naming the write
   * that was not made; anything else STRAIT_ERR_STORE_UNAVAILABLE.
   */
  private writeError(err: unknown, what: string, stage: string): Error {
    const e = err as Error & { code?: string };
    if (e?.code === 'SQLITE_FULL' || /ENOSPC|disk is full/i.test(String(e?.message))) return E.storeFull(this.where, what);
    return E.storeUnavailable(this.where, `${stage}: ${e?.message ?? String(err)}`);
  }

  /** The open group's transaction is gone (rolled back): every write staged in it is refused, the counters read back. */
  private failGroup(err: unknown): void {
    const group = this.group ?? [];
    this.group = undefined;
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // the transaction is already gone
    }
    const meta = new Map((this.db.prepare('SELECT key, value FROM meta').all() as { key: string; value: number }[]).map((r) => [r.key, r.value]));
    this.rv = meta.get('rv') ?? this.rv;
    this.compacted = meta.get('compacted') ?? this.compacted;
    for (const g of group) g.reject(this.writeError(err, g.what || 'a write that was waiting for the same commit', 'commit failed'));
  }

  /** Commit the open group (if any), then tell watchers and writers. */
  private flush(): void {
    const group = this.group;
    if (!group) return;
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      this.failGroup(err);
      return;
    }
    this.group = undefined;
    for (const g of group) {
      if (g.change) for (const w of this.watchers) w.offer(g.change);
      g.resolve();
    }
  }

  /** A value to hand back after the open group (if any) has committed: no-op writes must not acknowledge staged state. */
  private settle<T>(value: T): Promise<T> {
    if (!this.group) return Promise.resolve(value);
    return new Promise<T>((resolve, reject) => this.group!.push({ change: undefined, what: '', resolve: () => resolve(value), reject }));
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    this.readable();
    const key = kindKey(kind);
    const o = this.read(key, effectiveNamespace(key, namespace), name);
    return o ? (inVersion(o, kind.apiVersion) as T) : undefined;
  }

  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts: ListOptions = {}): Promise<ObjectList<T>> {
    this.readable();
    const key = kindKey(kind);
    const reqs = parseSelector(opts.labelSelector);
    const ns = namespaceFilter(key, opts.namespace);
    const rows = (ns === undefined ? this.s.listKind.all(key) : this.s.listNs.all(key, ns)) as Row[];
    const items: T[] = [];
    for (const r of rows) {
      const o = JSON.parse(r.body) as T;
      if (reqs.length === 0 || matchesSelector(reqs, o.metadata.labels)) items.push(inVersion(o, kind.apiVersion));
    }
    return { items, resourceVersion: String(this.rv) };
  }

  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEventAsked: (ev: WatchEvent<T>) => void): Watch {
    // every object in the version the watch asked for
    const onEvent = (ev: WatchEvent<T>): void => onEventAsked({ ...ev, object: inVersion(ev.object, kind.apiVersion) });
    const w = new Watcher('', undefined, [], onEvent as (ev: WatchEvent) => void, (x) => this.watchers.delete(x));
    let key: string;
    let from: number | undefined;
    let reqs;
    try {
      this.readable();
      key = kindKey(kind);
      reqs = parseSelector(opts.labelSelector);
      from = parseRv(opts.resourceVersion);
      // "0" is Kubernetes' "any version": replay from the beginning while the log still has it, else the current state
      if (from === 0 && this.compacted > 0) from = undefined;
      if (from !== undefined && from < this.compacted) throw E.watchExpired(String(from), String(this.compacted + 1));
    } catch (err) {
      w.fail(err);
      return w;
    }
    const watcher = new Watcher(key, namespaceFilter(key, opts.namespace), reqs, onEvent as (ev: WatchEvent) => void, (x) => this.watchers.delete(x));
    // backlog (or the current state) and registration happen in one synchronous step: no gap
    if (from === undefined) {
      const rows = (watcher.namespace === undefined ? this.s.listKind.all(key) : this.s.listNs.all(key, watcher.namespace)) as Row[];
      for (const r of rows) {
        const object = JSON.parse(r.body) as KubeObject;
        if (matchesSelector(reqs, object.metadata.labels)) watcher.push({ type: 'ADDED', object });
      }
    } else {
      const rows = this.s.since.all(key, from) as { rv: number; namespace: string; type: Change['type']; oldLabels: string | null; body: string }[];
      for (const r of rows) {
        watcher.offer({
          rv: r.rv,
          kind: key,
          namespace: r.namespace,
          type: r.type,
          oldLabels: r.oldLabels === null ? undefined : (JSON.parse(r.oldLabels) as Record<string, string>),
          body: r.body,
        });
      }
    }
    this.watchers.add(watcher);
    return watcher;
  }

  async apply<T extends KubeObject = KubeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    this.open();
    const incoming = structuredClone(obj) as KubeObject;
    return inVersion(await this.applyStored(inStorageVersion(incoming), opts), obj.apiVersion) as T;
  }

  private async applyStored(incoming: KubeObject, opts: ApplyOptions): Promise<KubeObject> {
    if (incoming?.metadata && !incoming.metadata.name && typeof incoming.metadata.generateName === 'string') {
      incoming.metadata.name = `${incoming.metadata.generateName}${randomBytes(4).toString('hex').slice(0, 5)}`;
    }
    checkObjectShape(incoming);
    const key = kindKey(incoming);
    const ns = effectiveNamespace(key, incoming.metadata.namespace);
    const name = incoming.metadata.name;
    const old = this.read(key, ns, name);
    const wantRv = incoming.metadata.resourceVersion;
    if (old && wantRv !== undefined && wantRv !== '' && wantRv !== old.metadata.resourceVersion) {
      throw E.conflict(incoming.kind, name, wantRv, old.metadata.resourceVersion ?? '');
    }
    if (!old && wantRv !== undefined && wantRv !== '') throw E.notFound(incoming.kind, name, ns || undefined);
    const patch = stripSystemMetadata(incoming);
    delete patch.status;
    let next: KubeObject;
    if (old) {
      next = mergePatch(old, patch) as KubeObject;
      if (old.status !== undefined) next.status = structuredClone(old.status);
      else delete next.status;
      next.metadata = { ...next.metadata, namespace: ns || undefined, name };
      if (!ns) delete next.metadata.namespace;
      if (jsonEqual(next, old)) return this.settle(old);
      if (!jsonEqual(specPart(next), specPart(old))) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
    } else {
      next = mergePatch({}, patch) as KubeObject;
      next.metadata = { ...next.metadata, name, uid: randomUUID(), creationTimestamp: now(), generation: 1 };
      if (ns) next.metadata.namespace = ns;
      else delete next.metadata.namespace;
    }
    this.admit(next, old, true);
    if (opts.dryRun) {
      next.metadata.resourceVersion = old?.metadata.resourceVersion;
      return next;
    }
    return this.commit(key, ns, name, old ? 'MODIFIED' : 'ADDED', next, old);
  }

  async update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.open();
    const incoming = structuredClone(obj) as KubeObject;
    checkObjectShape(incoming);
    return inVersion(await this.updateStored(inStorageVersion(incoming)), obj.apiVersion) as T;
  }

  private async updateStored(incoming: KubeObject): Promise<KubeObject> {
    const key = kindKey(incoming);
    const ns = effectiveNamespace(key, incoming.metadata.namespace);
    const name = incoming.metadata.name;
    const old = this.read(key, ns, name);
    if (!old) throw E.notFound(incoming.kind, name, ns || undefined);
    const wantRv = incoming.metadata.resourceVersion;
    if (wantRv !== undefined && wantRv !== '' && wantRv !== old.metadata.resourceVersion) {
      throw E.conflict(incoming.kind, name, wantRv, old.metadata.resourceVersion ?? '');
    }
    const next = stripSystemMetadata(incoming);
    delete next.status;
    if (old.status !== undefined) next.status = structuredClone(old.status);
    next.metadata = {
      ...next.metadata,
      name,
      uid: old.metadata.uid,
      creationTimestamp: old.metadata.creationTimestamp,
      generation: old.metadata.generation,
      resourceVersion: old.metadata.resourceVersion,
    };
    if (ns) next.metadata.namespace = ns;
    else delete next.metadata.namespace;
    this.admit(next, old, true);
    if (jsonEqual(next, old)) return this.settle(old);
    if (!jsonEqual(specPart(next), specPart(old))) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
    return this.commit(key, ns, name, 'MODIFIED', next, old);
  }

  async updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    this.open();
    checkObjectShape(obj);
    const key = kindKey(obj);
    const ns = effectiveNamespace(key, obj.metadata.namespace);
    const name = obj.metadata.name;
    const old = this.read(key, ns, name);
    if (!old) throw E.notFound(obj.kind, name, ns || undefined);
    const wantRv = obj.metadata.resourceVersion;
    if (wantRv !== undefined && wantRv !== '' && wantRv !== old.metadata.resourceVersion) {
      throw E.conflict(obj.kind, name, wantRv, old.metadata.resourceVersion ?? '');
    }
    const next = structuredClone(old);
    if (obj.status === undefined) delete next.status;
    else next.status = structuredClone(obj.status);
    this.admit(next, old, false);
    if (jsonEqual(next, old)) return inVersion(await this.settle(old), obj.apiVersion) as T;
    return inVersion(await this.commit(key, ns, name, 'MODIFIED', inStorageVersion(next), old), obj.apiVersion) as T;
  }

  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    this.open();
    const key = kindKey(kind);
    const ns = effectiveNamespace(key, namespace);
    const old = this.read(key, ns, name);
    if (!old) return this.settle(false);
    await this.commit(key, ns, name, 'DELETED', structuredClone(old), old);
    return true;
  }

  async recordEvent(ev: CoreEvent): Promise<void> {
    this.open();
    const io = ev.involvedObject;
    if (!io || typeof io.name !== 'string' || typeof io.kind !== 'string' || typeof ev.reason !== 'string') {
      throw E.usage('an event needs involvedObject (apiVersion, kind, name) and reason');
    }
    const ioKey = kindKey(io);
    const ioNs = effectiveNamespace(ioKey, io.namespace);
    const ns = ioNs || 'default';
    const hash = createHash('sha256')
      .update(JSON.stringify([ioKey, ns, io.name, io.uid ?? '', ev.reason]))
      .digest('hex')
      .slice(0, 16);
    const name = `${io.name.slice(0, 200)}.${hash}`;
    const key = EVENT_KEY;
    const old = this.read(key, ns, name);
    const t = now();
    const involvedObject: CoreEvent['involvedObject'] = { ...io };
    if (ioNs) involvedObject.namespace = ioNs;
    else delete involvedObject.namespace;
    let next: KubeObject;
    if (old) {
      next = structuredClone(old);
      next['count'] = (typeof old['count'] === 'number' ? old['count'] : 1) + 1;
      next['lastTimestamp'] = t;
      next['message'] = ev.message;
      next['type'] = ev.type;
    } else {
      next = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace: ns, uid: randomUUID(), creationTimestamp: t },
        involvedObject,
        reason: ev.reason,
        message: ev.message,
        type: ev.type,
        source: { component: ev.source ?? 'strait' },
        reportingComponent: ev.source ?? 'strait',
        count: 1,
        firstTimestamp: t,
        lastTimestamp: t,
      };
    }
    const written = this.commit(key, ns, name, old ? 'MODIFIED' : 'ADDED', next, old);
    const expired = this.pruneEvents();
    await written;
    await expired;
  }

  /** Delete Events older than the TTL; runs at most every min(60 s, TTL/2), from recordEvent. */
  private pruneEvents(): Promise<unknown> {
    const nowMs = Date.now();
    if (nowMs - this.lastEventPrune < Math.min(60_000, this.eventTtlMs / 2)) return Promise.resolve();
    this.lastEventPrune = nowMs;
    const cutoff = new Date(nowMs - this.eventTtlMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const rows = this.s.oldEvents.all(EVENT_KEY, cutoff) as { namespace: string; name: string; body: string }[];
    return Promise.all(
      rows.map((r) => {
        const old = JSON.parse(r.body) as KubeObject;
        return this.commit(EVENT_KEY, r.namespace, r.name, 'DELETED', structuredClone(old), old);
      }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    for (const w of [...this.watchers]) w.stop();
    try {
      this.db.close();
    } catch (err) {
      if (!isStraitError(err)) throw err;
    }
  }

  /** Highest resourceVersion handed out so far. */
  currentResourceVersion(): string {
    return String(this.rv);
  }
}
