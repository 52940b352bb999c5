// The Kubernetes ResourceStore: the same interface as the embedded store, over a real
// API server. get/list/watch on the dynamic paths of kinds.ts; apply = create (with the
// object's status, for CRDs without the status subresource) or JSON merge patch (the
// interface's semantics) with a fieldManager; serverSideApply for
// callers that want SSA's field ownership; status through the status subresource;
// core/v1 Events aggregated per object and reason.
import { E, isStraitError } from '../../../base/errors/index.js';
import { checkStoredObject, failClosedStandIn } from '../../resources/index.js';
import type { ApplyOptions, CoreEvent, KindRef, KubeObject, ListOptions, ObjectList, ResourceStore, Watch, WatchEvent, WatchOptions } from '../types.js';
import { mergePatch } from '../merge-patch.js';
import { mapStatus, resourceNotServed } from './errors.js';
import { eventName, newEvent } from './events.js';
import type { HttpClient, KubeResponse } from './http.js';
import { collectionPath, objectPath, resolveKind, resourceName, type ResolvedKind } from './paths.js';
import { KubeWatch } from './watch.js';

export interface ServerSideApplyOptions {
  /** recorded in managedFields; default "strait" */
  fieldManager?: string;
  /** take fields another manager owns instead of failing with STRAIT_ERR_CONFLICT; default true */
  force?: boolean;
  dryRun?: boolean;
}

/** ResourceStore plus what only the Kubernetes store can do. */
export interface KubernetesResourceStore extends ResourceStore {
  /** Server-side apply (application/apply-patch): fields this manager stops sending are removed. */
  serverSideApply<T extends KubeObject = KubeObject>(obj: T, opts?: ServerSideApplyOptions): Promise<T>;
  /** The API server URL this store talks to. */
  readonly server: string;
  /** The API server's URL and the CA (PEM) the kubeconfig trusts for it (for handing on, e.g. in broker-info). */
  connection(): Promise<{ server: string; caPem?: string }>;
  /**
   * One request on a path outside kinds.ts (RBAC objects, webhook configurations, the
   * TokenRequest subresource). Non-2xx answers reject with the mapped StraitError;
   * `allow` lists statuses returned instead (e.g. [404, 409]).
   */
  raw(spec: RawRequest, allow?: number[]): Promise<{ status: number; body: unknown; text?: string }>;
  /**
   * Fail with STRAIT_ERR_KUBE_CRD_MISSING, naming every one of `kinds` the API server does
   * not serve (discovery: GET /apis/<group>/<version>), before a command writes anything.
   */
  requireKinds(kinds: readonly KindRef[]): Promise<void>;
}

export interface RawRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

const DEFAULT_MANAGER = 'strait';
const ok = (status: number): boolean => status >= 200 && status < 300;

function withKind<T extends KubeObject>(o: unknown, k: ResolvedKind): T {
  const obj = o as T;
  obj.apiVersion ??= k.apiVersion;
  obj.kind ??= k.kind;
  return obj;
}

/** Object names are DNS-1123 subdomains (as the API server checks, but before any request). */
const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
function checkName(kind: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length > 253 || !NAME.test(name)) {
    throw E.usage(
      `${kind} name ${JSON.stringify(name)} is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most 253, starting and ending with a letter or digit); rename it`,
      { kind, name },
    );
  }
}

/**
 * The object without server-owned metadata, for patches and creates. The namespace is
 * the one the store resolved (dropped for cluster-scoped kinds); resourceVersion is kept
 * only when asked (a merge patch with it is a precondition: stale -> 409 Conflict).
 */
function patchBody(obj: KubeObject, namespace: string | undefined, keepRv: boolean): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = obj;
  const {
    resourceVersion,
    uid: _uid,
    creationTimestamp: _ct,
    generation: _g,
    deletionTimestamp: _dt,
    namespace: _ns,
    ...meta
  } = metadata as unknown as Record<string, unknown>;
  delete meta['managedFields'];
  if (namespace !== undefined) meta['namespace'] = namespace;
  if (keepRv && resourceVersion) meta['resourceVersion'] = resourceVersion;
  return { ...rest, metadata: meta };
}

function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

/** Events are reports (the API server writes them with null timestamps); nothing renders them. */
const UNCHECKED_KINDS = new Set(['Event']);

export class KubernetesStore implements KubernetesResourceStore {
  private readonly watches = new Set<Watch>();
  private closed = false;
  /** uid@resourceVersion of invalid objects already reported (one Event each) */
  private readonly reported = new Set<string>();

  constructor(
    private readonly http: HttpClient,
    private readonly watchTimeoutSeconds = 300,
  ) {}

  get server(): string {
    return this.http.server;
  }

  private check(): void {
    if (this.closed) throw E.storeUnavailable(this.http.server, 'the store was closed');
  }

  private ns(k: ResolvedKind, namespace: string | undefined): string | undefined {
    return k.namespaced ? (namespace ?? 'default') : undefined;
  }

  /**
   * Objects read from a list or watch: anything can be in the API server (kubectl,
   * another controller), so each one is checked as the write path checks it. An invalid
   * one is skipped (to the caller it does not exist), or replaced by its kind's fail-closed
   * stand-in where skipping would weaken security (a PeerAuthentication reads as STRICT),
   * and reported once with a Warning Event on it, as `strait apply` would have refused it.
   */
  private readable<T extends KubeObject>(o: T): T | undefined {
    if (UNCHECKED_KINDS.has(o.kind)) return o;
    try {
      checkStoredObject(o);
      return o;
    } catch (err) {
      const reason = isStraitError(err) ? err.message : String(err);
      const id = `${o.metadata?.uid ?? `${o.metadata?.namespace}/${o.metadata?.name}`}@${o.metadata?.resourceVersion ?? ''}`;
      if (!this.reported.has(id) && !this.closed) {
        if (this.reported.size > 10_000) this.reported.clear();
        this.reported.add(id);
        const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '';
        if (name) {
          this.recordEvent({
            involvedObject: {
              apiVersion: o.apiVersion,
              kind: o.kind,
              name,
              ...(typeof o.metadata.namespace === 'string' ? { namespace: o.metadata.namespace } : {}),
              ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
            },
            type: 'Warning',
            reason: 'InvalidObject',
            source: 'strait',
            message: `${failClosedStandIn(o, reason) ? 'enforced as its strictest setting' : 'ignored'} by strait: ${reason}`,
          }).catch(() => {
            /* reporting is best effort; the object stays ignored */
          });
        }
      }
      return typeof o.metadata?.name === 'string' ? (failClosedStandIn(o, reason) as T | undefined) : undefined;
    }
  }

  /** Before a write: the same check every store makes (STRAIT_ERR_OBJECT_INVALID); a merge patch's nulls mean "remove". */
  private writable(o: KubeObject): void {
    if (!UNCHECKED_KINDS.has(o.kind)) checkStoredObject(withoutNulls(o));
  }

  private fail(res: KubeResponse, verb: string, k: ResolvedKind, name: string, namespace?: string, rv?: string): never {
    throw mapStatus(res.status, res.body, { verb, kind: k.kind, name, namespace, resourceVersion: rv, resource: resourceName(k), server: this.http.server });
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    this.check();
    const k = resolveKind(kind);
    const res = await this.http.request({ method: 'GET', path: objectPath(k, name, namespace) });
    if (res.status === 404 && !resourceNotServed(res.status, res.body)) return undefined;
    if (!ok(res.status)) this.fail(res, 'get', k, name, this.ns(k, namespace));
    return withKind<T>(res.body, k);
  }

  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts: ListOptions = {}): Promise<ObjectList<T>> {
    this.check();
    const k = resolveKind(kind);
    return this.listResolved<T>(k, opts);
  }

  /** `exact`: the collection as it was at that resourceVersion (410 -> STRAIT_ERR_WATCH_EXPIRED) */
  private async listResolved<T extends KubeObject>(k: ResolvedKind, opts: ListOptions, exact?: string): Promise<ObjectList<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const res = await this.http.request({
        method: 'GET',
        path: collectionPath(k, opts.namespace),
        query: {
          labelSelector: opts.labelSelector,
          limit: '500',
          continue: cont,
          ...(exact !== undefined && cont === undefined ? { resourceVersion: exact, resourceVersionMatch: 'Exact' } : {}),
        },
      });
      if (!ok(res.status)) this.fail(res, 'list', k, '*', opts.namespace, exact);
      const body = res.body as { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } };
      for (const it of body.items ?? []) {
        const o = this.readable(withKind<T>(it, k));
        if (o) items.push(o);
      }
      resourceVersion = body.metadata?.resourceVersion ?? resourceVersion;
      cont = body.metadata?.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }

  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    this.check();
    const k = resolveKind(kind);
    const w = new KubeWatch<T>(
      {
        http: this.http,
        kind: k,
        timeoutSeconds: this.watchTimeoutSeconds,
        list: (exact) => this.listResolved(k, opts, exact),
        readable: <O extends KubeObject>(o: O) => this.readable(o),
      },
      opts,
      onEvent,
    );
    this.watches.add(w);
    const forget = (): void => {
      this.watches.delete(w);
    };
    w.done.then(forget, forget);
    return w;
  }

  async apply<T extends KubeObject = KubeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    this.check();
    const k = resolveKind(obj);
    const { name } = obj.metadata;
    checkName(k.kind, name);
    const namespace = this.ns(k, obj.metadata.namespace);
    const query = { fieldManager: opts.fieldManager ?? DEFAULT_MANAGER, dryRun: opts.dryRun ? 'All' : undefined };
    const body = patchBody(obj, namespace, true);
    // what the object will be: the merge of this patch into the current one (the embedded store checks the same)
    const current = await this.get(k, name, namespace);
    this.writable(current ? { ...(mergePatch(current, patchBody(obj, namespace, false)) as KubeObject), status: undefined } : obj);
    for (let attempt = 0; ; attempt++) {
      const patched = await this.http.request({
        method: 'PATCH',
        path: objectPath(k, name, namespace),
        query,
        body,
        contentType: 'application/merge-patch+json',
      });
      if (ok(patched.status)) return withKind<T>(patched.body, k);
      if (patched.status !== 404 || resourceNotServed(patched.status, patched.body))
        this.fail(patched, 'apply', k, name, namespace, obj.metadata.resourceVersion);
      // a status goes along on create: the API server drops it where the CRD has the status
      // subresource, and needs it where the CRD has none and requires one (Submariner's Gateway)
      const created = await this.http.request({
        method: 'POST',
        path: collectionPath(k, namespace),
        query,
        body: { ...patchBody(obj, namespace, false), ...(obj.status !== undefined ? { status: obj.status } : {}) },
      });
      if (ok(created.status)) return withKind<T>(created.body, k);
      // created by someone else between the two requests: merge into theirs
      if (created.status === 409 && attempt === 0) continue;
      this.fail(created, 'create', k, name, namespace);
    }
  }

  async serverSideApply<T extends KubeObject = KubeObject>(obj: T, opts: ServerSideApplyOptions = {}): Promise<T> {
    this.check();
    const k = resolveKind(obj);
    const { name } = obj.metadata;
    checkName(k.kind, name);
    this.writable(obj);
    const namespace = this.ns(k, obj.metadata.namespace);
    const body = patchBody(obj, namespace, false);
    const res = await this.http.request({
      method: 'PATCH',
      path: objectPath(k, name, namespace),
      body,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: opts.fieldManager ?? DEFAULT_MANAGER, force: String(opts.force ?? true), dryRun: opts.dryRun ? 'All' : undefined },
    });
    if (!ok(res.status)) this.fail(res, 'apply', k, name, namespace);
    return withKind<T>(res.body, k);
  }

  private async replace<T extends KubeObject>(obj: T, sub: 'status' | undefined): Promise<T> {
    this.check();
    const k = resolveKind(obj);
    const { name, resourceVersion } = obj.metadata;
    checkName(k.kind, name);
    if (sub === undefined) this.writable(obj);
    const namespace = this.ns(k, obj.metadata.namespace);
    const { namespace: _ns, ...meta } = obj.metadata;
    let body: KubeObject = { ...obj, apiVersion: k.apiVersion, kind: k.kind, metadata: { ...meta, ...(namespace ? { namespace } : {}) } };
    if (!resourceVersion) {
      // the interface allows an unconditional update; the API server wants a resourceVersion
      // for some kinds, so send the current one
      const cur = await this.get(obj, name, namespace);
      if (!cur) throw E.notFound(k.kind, name, namespace);
      body = { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion } };
      if (sub === undefined && cur.status !== undefined) body.status = cur.status;
    }
    let res = await this.http.request({ method: 'PUT', path: objectPath(k, name, namespace, sub), body, query: { fieldManager: DEFAULT_MANAGER } });
    if (res.status === 404 && sub === 'status') {
      // a CRD without the status subresource (e.g. upstream Argo CD's): status is part of the object
      const cur = await this.get(obj, name, namespace);
      if (cur) {
        const whole = { ...cur, status: obj.status, metadata: { ...cur.metadata, resourceVersion: resourceVersion ?? cur.metadata.resourceVersion } };
        res = await this.http.request({ method: 'PUT', path: objectPath(k, name, namespace), body: whole, query: { fieldManager: DEFAULT_MANAGER } });
      }
    }
    if (ok(res.status)) return withKind<T>(res.body, k);
    if (res.status === 409 && resourceVersion) {
      const cur = await this.get(obj, name, namespace).catch(() => undefined);
      throw E.conflict(k.kind, name, resourceVersion, cur?.metadata.resourceVersion ?? '(deleted)');
    }
    if (res.status === 409 && !resourceVersion) return this.replace(obj, sub);
    this.fail(res, sub ? 'update status of' : 'update', k, name, namespace, resourceVersion);
  }

  update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.replace(obj, undefined);
  }

  updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.replace(obj, 'status');
  }

  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    this.check();
    const k = resolveKind(kind);
    const res = await this.http.request({ method: 'DELETE', path: objectPath(k, name, namespace), body: { propagationPolicy: 'Background' } });
    if (res.status === 404 && !resourceNotServed(res.status, res.body)) return false;
    if (!ok(res.status)) this.fail(res, 'delete', k, name, this.ns(k, namespace));
    return true;
  }

  async recordEvent(ev: CoreEvent): Promise<void> {
    this.check();
    const k = resolveKind({ apiVersion: 'v1', kind: 'Event' });
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const namespace = ev.involvedObject.namespace ?? 'default';
    const name = eventName(ev);
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.get<KubeObject & { count?: number }>(k, name, namespace);
      if (!cur) {
        const res = await this.http.request({ method: 'POST', path: collectionPath(k, namespace), body: newEvent(ev, now) });
        if (ok(res.status)) return;
        if (res.status === 409) continue;
        this.fail(res, 'create', k, name, namespace);
      }
      const res = await this.http.request({
        method: 'PATCH',
        path: objectPath(k, name, namespace),
        contentType: 'application/merge-patch+json',
        body: { metadata: { resourceVersion: cur.metadata.resourceVersion }, count: (cur.count ?? 1) + 1, lastTimestamp: now, message: ev.message },
      });
      if (ok(res.status)) return;
      if (res.status !== 409) this.fail(res, 'update', k, name, namespace);
    }
    throw E.conflict('Event', name, '', '(changing too fast)');
  }

  async connection(): Promise<{ server: string; caPem?: string }> {
    this.check();
    return this.http.connection ? this.http.connection() : { server: this.http.server };
  }

  async raw(spec: RawRequest, allow: number[] = []): Promise<{ status: number; body: unknown; text?: string }> {
    this.check();
    const res = await this.http.request(spec);
    if (ok(res.status) || allow.includes(res.status)) return res;
    const m = /\/([a-z0-9.-]+)(?:\/([a-z0-9.-]+))?(?:\/(status|token))?$/.exec(spec.path.replace(/\?.*$/, ''));
    throw mapStatus(res.status, res.body, { verb: spec.method.toLowerCase(), kind: m?.[1] ?? spec.path, name: m?.[2] ?? '' });
  }

  async requireKinds(kinds: readonly KindRef[]): Promise<void> {
    this.check();
    const byVersion = new Map<string, ResolvedKind[]>();
    for (const ref of kinds) {
      const k = resolveKind(ref);
      byVersion.set(k.prefix, [...(byVersion.get(k.prefix) ?? []), k]);
    }
    const missing: string[] = [];
    for (const [prefix, ks] of byVersion) {
      const res = await this.http.request({ method: 'GET', path: prefix });
      if (!ok(res.status) && res.status !== 404) throw mapStatus(res.status, res.body, { verb: 'discover', kind: 'APIResourceList', name: prefix });
      const served = new Set(ok(res.status) ? ((res.body as { resources?: { name?: string }[] }).resources ?? []).map((r) => r.name) : []);
      for (const k of ks) if (!served.has(k.plural)) missing.push(resourceName(k));
    }
    if (missing.length > 0) throw E.kubeCrdMissing(this.http.server, [...new Set(missing)]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.watches]) w.stop();
    this.http.close();
  }
}
