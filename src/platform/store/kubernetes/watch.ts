// list/watch against the API server with restart: a watch that the server ends
// (timeoutSeconds, a dropped connection, an apiserver restart) resumes from the last
// resourceVersion it saw (bookmarks keep that fresh); when the server answers 410 Gone
// for a resourceVersion the watch itself advanced to, it re-lists and delivers the
// difference as ADDED/MODIFIED/DELETED. A too-old resourceVersion asked for by the caller
// rejects `done` with STRAIT_ERR_WATCH_EXPIRED, as the embedded store does.
import { Backoff, type BackoffPolicy } from '../../../base/backoff/index.js';
import { E, isStraitError } from '../../../base/errors/index.js';
import type { KubeObject, Watch, WatchEvent, WatchOptions } from '../types.js';
import { asStatus, mapStatus } from './errors.js';
import type { IncomingMessage } from 'node:http';
import type { HttpClient } from './http.js';
import { collectionPath, resourceName, type ResolvedKind } from './paths.js';

/**
 * a watch request that failed (the API server is away): again after 200 ms, doubling, at most
 * 2 s (as the informers re-list: a restarted API server is watched again within 2 s)
 */
const WATCH_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 200, maxMs: 2000 });

const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export interface WatchDeps {
  http: HttpClient;
  kind: ResolvedKind;
  /** list the collection (objects carry apiVersion/kind); `exact`: as it was at that resourceVersion */
  list(exact?: string): Promise<{ items: KubeObject[]; resourceVersion: string }>;
  /** seconds the server keeps one watch request open (restarts after) */
  timeoutSeconds: number;
  /** the object as callers see it: itself, a fail-closed stand-in, or undefined (skipped; reported by the store) */
  readable?<O extends KubeObject>(o: O): O | undefined;
}

export class KubeWatch<T extends KubeObject> implements Watch {
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (e: unknown) => void;
  private stopped = false;
  private abort: AbortController | undefined;
  /** last resourceVersion seen (event or bookmark) */
  private rv: string | undefined;
  /** true once the server gave us anything newer than the caller's resourceVersion */
  private advanced = false;
  /** objects delivered so far: key -> resourceVersion (for the re-list diff) */
  private readonly known = new Map<string, KubeObject>();
  /** a watch request was answered at least once (later failures are retried) */
  private connected = false;

  constructor(
    private readonly deps: WatchDeps,
    private readonly opts: WatchOptions,
    private readonly onEvent: (ev: WatchEvent<T>) => void,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => {
      /* the caller may not await done; it still sees the rejection if it does */
    });
    this.rv = opts.resourceVersion;
    void this.run();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abort?.abort();
    this.resolveDone();
  }

  private fail(e: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.abort?.abort();
    this.rejectDone(e);
  }

  private emit(type: WatchEvent['type'], obj: KubeObject): void {
    if (this.stopped) return;
    if (type === 'DELETED') this.known.delete(key(obj));
    else this.known.set(key(obj), obj);
    try {
      this.onEvent({ type, object: obj as T });
    } catch {
      // a throwing handler must not end the watch for everyone else
    }
  }

  /** Re-list and deliver the difference to what was delivered before. */
  private async relist(): Promise<void> {
    const list = await this.deps.list();
    const filter = this.opts.namespace;
    const seen = new Set<string>();
    for (const o of list.items) {
      if (filter !== undefined && o.metadata.namespace !== filter) continue;
      const k = key(o);
      seen.add(k);
      const before = this.known.get(k);
      if (!before) this.emit('ADDED', o);
      else if (before.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit('MODIFIED', o);
    }
    for (const [k, o] of [...this.known]) if (!seen.has(k)) this.emit('DELETED', o);
    this.rv = list.resourceVersion;
    this.advanced = true;
  }

  private async run(): Promise<void> {
    const backoff = new Backoff(WATCH_BACKOFF);
    try {
      if (this.rv === undefined || this.rv === '0') {
        // no resourceVersion ("0": any): the current state first (as ADDED), then every change
        await this.relist();
      } else {
        // the state at the caller's resourceVersion, without events: a later re-list
        // compares against it (so objects deleted meanwhile come out as DELETED)
        const at = await this.deps.list(this.rv);
        for (const o of at.items) this.known.set(key(o), o);
      }
    } catch (e) {
      this.fail(isStraitError(e, E.watchExpired.code) ? E.watchExpired(this.opts.resourceVersion ?? '', '(compacted by the API server)') : e);
      return;
    }
    while (!this.stopped) {
      try {
        const outcome = await this.once();
        backoff.reset();
        if (outcome === 'expired') {
          if (!this.advanced) {
            this.fail(E.watchExpired(this.opts.resourceVersion ?? '', '(compacted by the API server)'));
            return;
          }
          await this.relist();
        }
      } catch (e) {
        if (this.stopped) return;
        const transient = isStraitError(e, E.storeUnavailable.code) || (e as Error).name === 'AbortError';
        if (!transient || !this.connected) {
          this.fail(e);
          return;
        }
        await new Promise((r) => setTimeout(r, backoff.fail()));
      }
    }
  }

  /** A watch request the server did not accept: 'expired' on 410, else the error its status maps to (429 and 5xx: unavailable, retried). */
  private async refused(res: IncomingMessage): Promise<'expired'> {
    const { http, kind } = this.deps;
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = {};
    }
    if (res.statusCode === 410) return 'expired';
    const status = res.statusCode ?? 0;
    // shutting down, overloaded, restarting: try again
    if (status === 429 || status >= 500) throw E.storeUnavailable(http.server, `watch answered HTTP ${status}`);
    throw mapStatus(res.statusCode ?? 0, body, {
      verb: 'watch',
      kind: kind.kind,
      name: '*',
      namespace: this.opts.namespace,
      resource: resourceName(kind),
      server: http.server,
    });
  }

  /** One watch request; resolves when the server ends it ('expired' on 410). */
  private async once(): Promise<'ended' | 'expired'> {
    const { http, kind } = this.deps;
    this.abort = new AbortController();
    const res = await http.open(
      {
        method: 'GET',
        path: collectionPath(kind, this.opts.namespace),
        query: {
          watch: 'true',
          allowWatchBookmarks: 'true',
          resourceVersion: this.rv,
          timeoutSeconds: String(this.deps.timeoutSeconds),
          labelSelector: this.opts.labelSelector,
        },
      },
      this.abort.signal,
      (this.deps.timeoutSeconds + 30) * 1000,
    );
    if (res.statusCode !== 200) return this.refused(res);
    this.connected = true;
    let buf = '';
    let result: 'ended' | 'expired' = 'ended';
    try {
      for await (const chunk of res) {
        buf += (chunk as Buffer).toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim() === '') continue;
          const ev = JSON.parse(line) as { type: string; object: KubeObject };
          if (ev.type === 'ERROR') {
            const st = asStatus(ev.object);
            if (st.code === 410) result = 'expired';
            res.destroy();
            return result;
          }
          const rv = ev.object?.metadata?.resourceVersion;
          if (rv) this.rv = rv;
          this.advanced = true;
          if (ev.type === 'BOOKMARK') continue;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') {
            const obj = ev.object;
            obj.apiVersion ??= kind.apiVersion;
            obj.kind ??= kind.kind;
            const seen = ev.type === 'DELETED' || !this.deps.readable ? obj : this.deps.readable(obj);
            if (!seen) {
              // an object that became invalid is gone for the caller, as a re-list would show
              const before = this.known.get(key(obj));
              if (before) this.emit('DELETED', before);
              continue;
            }
            this.emit(ev.type, seen);
          }
        }
      }
    } catch (e) {
      if (this.stopped) return 'ended';
      throw E.storeUnavailable(http.server, `watch stream broke: ${(e as Error).message}`);
    }
    return result;
  }
}
