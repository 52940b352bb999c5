// The store API server: one handler (createStoreApi) for every place that serves it, and
// serveStores, its home: an HTTP server on a unix socket (mode 0600), the bearer token
// checked in constant time, one ResourceStore per cluster name. The control module mounts
// the same handler on its API port for the web console, with the session of its API
// instead of the token (src/console).
import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { E, isStraitError } from '../../../base/errors/index.js';
import { listenServer } from '../../../base/net/index.js';
import { HttpError, decodeComponent, handleWith, httpStatusOf, readJsonBody, requestTarget, sendJson, type ErrorAnswer } from '../../http/index.js';
import type { KindRef, KubeObject, ResourceStore, Watch } from '../types.js';
import { API_PREFIX, MAX_BODY, MAX_WATCH_BACKLOG, STREAM_PATH, toWireError } from './protocol.js';
import { parseStreamWatches, serveStream } from './stream.js';

export interface StoreServerOptions {
  /** unix socket path the API listens on (reachable from every network namespace) */
  socketPath: string;
  /** bearer token clients must present */
  token: string;
  /** one store per cluster name, plus "broker" */
  stores: Map<string, ResourceStore>;
}

export type StoreVerb = 'clusters' | 'get' | 'list' | 'watch' | 'stream' | 'apply' | 'update' | 'status' | 'delete' | 'events';
/** the verbs that change a store */
export const WRITE_VERBS: ReadonlySet<StoreVerb> = new Set(['apply', 'update', 'status', 'delete', 'events']);

/**
 * One operation as the handler asks its owner to authorize it: first without cluster and
 * kind (who asks, before a body is read), then with them (a stream: once per watch).
 */
export interface StoreOp {
  verb: StoreVerb;
  cluster?: string;
  /** the kind it reads or writes (apply, update, status: the body's) */
  kind?: KindRef;
}

export interface StoreApiOptions {
  stores: ReadonlyMap<string, ResourceStore>;
  /** allow by returning; refuse by throwing a StraitError (its kind gives the HTTP status) */
  authorize(req: IncomingMessage, op: StoreOp): void;
}

export interface StoreApi {
  /** answers every request it is given (errors: a StraitError's {code, message, detail}) */
  listener(req: IncomingMessage, res: ServerResponse): void;
  /** true for the paths the store API serves */
  serves(path: string): boolean;
  /** end every watch and stream */
  close(): void;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The store API's error body is a StraitError's; a request it cannot read is a usage error. */
function storeError(err: unknown): ErrorAnswer {
  const s = err instanceof HttpError ? E.usage(err.message) : isStraitError(err) ? err : E.internal((err as Error)?.message ?? String(err));
  return { status: httpStatusOf(s), body: toWireError(s), code: s.code };
}

const readBody = (req: IncomingMessage): Promise<Record<string, unknown>> => readJsonBody(req, { limit: MAX_BODY });

function kindFrom(q: URLSearchParams): KindRef {
  return { apiVersion: q.get('apiVersion') ?? '', kind: q.get('kind') ?? '' };
}
const bodyKind = (o: KubeObject): KindRef => ({ apiVersion: String(o.apiVersion ?? ''), kind: String(o.kind ?? '') });
const opt = (q: URLSearchParams, k: string): string | undefined => q.get(k) ?? undefined;
const OPS: Record<string, StoreVerb> = {
  'GET object': 'get',
  'GET list': 'list',
  'GET watch': 'watch',
  'POST apply': 'apply',
  'PUT update': 'update',
  'PUT status': 'status',
  'DELETE object': 'delete',
  'POST events': 'events',
};

/** Every route of the store API (path templates: {cluster} is one segment). */
export const STORE_ROUTES: readonly { method: string; path: string }[] = [
  { method: 'GET', path: API_PREFIX },
  { method: 'GET', path: STREAM_PATH },
  ...Object.keys(OPS).map((op) => {
    const [method, what] = op.split(' ') as [string, string];
    return { method, path: `${API_PREFIX}/{cluster}/${what}` };
  }),
];

export function createStoreApi(opts: StoreApiOptions): StoreApi {
  const stops = new Set<() => void>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query: q } = requestTarget(req);
    if (path === API_PREFIX && req.method === 'GET') {
      opts.authorize(req, { verb: 'clusters' });
      sendJson(res, 200, { clusters: [...opts.stores.keys()] });
      return;
    }
    if (path === STREAM_PATH && req.method === 'GET') {
      opts.authorize(req, { verb: 'stream' });
      const watches = parseStreamWatches(q);
      for (const w of watches) opts.authorize(req, { verb: 'stream', cluster: w.cluster, kind: w.kind });
      const stop = serveStream(req, res, watches, opts.stores);
      stops.add(stop);
      res.on('close', () => stops.delete(stop));
      return;
    }
    const m = /^\/v1\/clusters\/([^/]+)\/([a-z]+)$/.exec(path);
    const op = `${req.method} ${m?.[2] ?? ''}`;
    const verb = OPS[op];
    // who asks is checked before anything else is looked at (or a body is read)
    opts.authorize(req, { verb: verb ?? 'get' });
    if (!m) throw E.notFound('path', path);
    if (!verb) throw E.notFound('operation', op);
    const cluster = decodeComponent(m[1]!);
    // the kind a write names is the body's: read it before asking about the kind
    const body = verb === 'apply' || verb === 'update' || verb === 'status' || verb === 'events' ? await readBody(req) : undefined;
    const kind = verb === 'events' ? undefined : body ? bodyKind(body as KubeObject) : kindFrom(q);
    opts.authorize(req, { verb, cluster, ...(kind ? { kind } : {}) });
    const store = opts.stores.get(cluster);
    if (!store) throw E.clusterUnknown(cluster, [...opts.stores.keys()]);
    switch (verb) {
      case 'get': {
        const o = await store.get(kindFrom(q), q.get('name') ?? '', opt(q, 'namespace'));
        sendJson(res, 200, { object: o ?? null });
        return;
      }
      case 'list':
        sendJson(res, 200, await store.list(kindFrom(q), { namespace: opt(q, 'namespace'), labelSelector: opt(q, 'labelSelector') }));
        return;
      case 'watch':
        startWatch(store, q, res);
        return;
      case 'apply':
        sendJson(res, 200, await store.apply(body as KubeObject, { dryRun: q.get('dryRun') === '1', fieldManager: opt(q, 'fieldManager') }));
        return;
      case 'update':
        sendJson(res, 200, await store.update(body as KubeObject));
        return;
      case 'status':
        sendJson(res, 200, await store.updateStatus(body as KubeObject));
        return;
      case 'delete':
        sendJson(res, 200, { deleted: await store.delete(kindFrom(q), q.get('name') ?? '', opt(q, 'namespace')) });
        return;
      case 'events':
        await store.recordEvent(body as unknown as Parameters<ResourceStore['recordEvent']>[0]);
        sendJson(res, 200, {});
        return;
      default:
        throw E.notFound('operation', op);
    }
  }

  function startWatch(store: ResourceStore, q: URLSearchParams, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
    res.flushHeaders();
    let ended = false;
    const end = (line?: string): void => {
      if (ended) return;
      ended = true;
      stops.delete(stop);
      w.stop();
      if (line) res.end(line);
      else res.end();
    };
    const stop = (): void => end();
    const w: Watch = store.watch(
      kindFrom(q),
      {
        namespace: opt(q, 'namespace'),
        labelSelector: opt(q, 'labelSelector'),
        resourceVersion: opt(q, 'resourceVersion'),
      },
      (ev) => {
        if (ended) return;
        res.write(`${JSON.stringify(ev)}\n`);
        if (res.writableLength > MAX_WATCH_BACKLOG) {
          const rv = ev.object.metadata.resourceVersion ?? '';
          end(`${JSON.stringify({ type: 'ERROR', error: E.watchExpired(rv, rv).toJSON() })}\n`);
        }
      },
    );
    stops.add(stop);
    w.done.then(
      () => end(),
      (err: unknown) => end(`${JSON.stringify({ type: 'ERROR', error: toWireError(err) })}\n`),
    );
    res.on('close', () => end());
  }

  return {
    listener: handleWith(handle, storeError),
    serves: (path) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`) || path === STREAM_PATH,
    close() {
      for (const s of [...stops]) s();
    },
  };
}

export async function serveStores(opts: StoreServerOptions): Promise<{ close(): Promise<void> }> {
  const want = digest(`Bearer ${opts.token}`);
  const api = createStoreApi({
    stores: opts.stores,
    authorize(req) {
      if (!timingSafeEqual(digest(req.headers.authorization ?? ''), want)) {
        throw E.unauthorized('the store API needs "Authorization: Bearer <token>" with the token of the running world');
      }
    },
  });
  const server = createServer(api.listener);
  server.keepAliveTimeout = 60_000;

  // a socket file left by a world that died is replaced; anything else there is an error
  try {
    const st = lstatSync(opts.socketPath);
    if (!st.isSocket()) throw E.storeUnavailable(opts.socketPath, 'the path exists and is not a socket; remove it or pick another state dir');
    unlinkSync(opts.socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const bound = await listenServer(server, { path: opts.socketPath }).catch((err: Error) => {
    throw E.storeUnavailable(opts.socketPath, `cannot listen: ${err.message}`);
  });
  chmodSync(opts.socketPath, 0o600);

  return {
    async close(): Promise<void> {
      api.close();
      await bound.close();
      try {
        unlinkSync(opts.socketPath);
      } catch {
        // already gone
      }
    },
  };
}
