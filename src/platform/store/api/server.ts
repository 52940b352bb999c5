// The store API server: one HTTP server on a unix socket (mode 0600), bearer token
// checked in constant time, one ResourceStore per cluster name.
import { createHash, timingSafeEqual } from 'node:crypto';
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { E, isStraitError } from '../../../base/errors/index.js';
import { listenServer } from '../../../base/net/index.js';
import { HttpError, decodeComponent, handleWith, httpStatusOf, readJsonBody, requestTarget, sendJson, type ErrorAnswer } from '../../http/index.js';
import type { KindRef, KubeObject, ResourceStore, Watch } from '../types.js';
import { API_PREFIX, MAX_BODY, MAX_WATCH_BACKLOG, toWireError } from './protocol.js';

export interface StoreServerOptions {
  /** unix socket path the API listens on (reachable from every network namespace) */
  socketPath: string;
  /** bearer token clients must present */
  token: string;
  /** one store per cluster name, plus "broker" */
  stores: Map<string, ResourceStore>;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The store API's error body is a StraitError's; a request it cannot read is a usage error. */
function storeError(err: unknown): ErrorAnswer {
  const s = err instanceof HttpError ? E.usage(err.message) : isStraitError(err) ? err : E.internal((err as Error)?.message ?? String(err));
  return { status: httpStatusOf(s), body: toWireError(s) };
}

const readBody = (req: IncomingMessage): Promise<Record<string, unknown>> => readJsonBody(req, { limit: MAX_BODY });

function kindFrom(q: URLSearchParams): KindRef {
  return { apiVersion: q.get('apiVersion') ?? '', kind: q.get('kind') ?? '' };
}
const opt = (q: URLSearchParams, k: string): string | undefined => q.get(k) ?? undefined;

export async function serveStores(opts: StoreServerOptions): Promise<{ close(): Promise<void> }> {
  const want = digest(`Bearer ${opts.token}`);
  const watches = new Set<Watch>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const given = digest(req.headers.authorization ?? '');
    if (!timingSafeEqual(given, want)) {
      const e = E.unauthorized('the store API needs "Authorization: Bearer <token>" with the token of the running world');
      sendJson(res, e.httpStatus, e.toJSON());
      return;
    }
    const { path, query: q } = requestTarget(req);
    if (path === API_PREFIX && req.method === 'GET') {
      sendJson(res, 200, { clusters: [...opts.stores.keys()] });
      return;
    }
    const m = /^\/v1\/clusters\/([^/]+)\/([a-z]+)$/.exec(path);
    if (!m) throw E.notFound('path', path);
    const cluster = decodeComponent(m[1]!);
    const store = opts.stores.get(cluster);
    if (!store) throw E.clusterUnknown(cluster, [...opts.stores.keys()]);
    const op = `${req.method} ${m[2]}`;
    switch (op) {
      case 'GET object': {
        const o = await store.get(kindFrom(q), q.get('name') ?? '', opt(q, 'namespace'));
        sendJson(res, 200, { object: o ?? null });
        return;
      }
      case 'GET list':
        sendJson(res, 200, await store.list(kindFrom(q), { namespace: opt(q, 'namespace'), labelSelector: opt(q, 'labelSelector') }));
        return;
      case 'GET watch':
        startWatch(store, q, res);
        return;
      case 'POST apply': {
        const body = (await readBody(req)) as KubeObject;
        sendJson(res, 200, await store.apply(body, { dryRun: q.get('dryRun') === '1', fieldManager: opt(q, 'fieldManager') }));
        return;
      }
      case 'PUT update':
        sendJson(res, 200, await store.update((await readBody(req)) as KubeObject));
        return;
      case 'PUT status':
        sendJson(res, 200, await store.updateStatus((await readBody(req)) as KubeObject));
        return;
      case 'DELETE object':
        sendJson(res, 200, { deleted: await store.delete(kindFrom(q), q.get('name') ?? '', opt(q, 'namespace')) });
        return;
      case 'POST events':
        await store.recordEvent((await readBody(req)) as unknown as Parameters<ResourceStore['recordEvent']>[0]);
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
      watches.delete(w);
      w.stop();
      if (line) res.end(line);
      else res.end();
    };
    const w = store.watch(kindFrom(q), {
      namespace: opt(q, 'namespace'), labelSelector: opt(q, 'labelSelector'), resourceVersion: opt(q, 'resourceVersion'),
    }, (ev) => {
      if (ended) return;
      res.write(`${JSON.stringify(ev)}\n`);
      if (res.writableLength > MAX_WATCH_BACKLOG) {
        const rv = ev.object.metadata.resourceVersion ?? '';
        end(`${JSON.stringify({ type: 'ERROR', error: E.watchExpired(rv, rv).toJSON() })}\n`);
      }
    });
    watches.add(w);
    w.done.then(() => end(), (err: unknown) => end(`${JSON.stringify({ type: 'ERROR', error: toWireError(err) })}\n`));
    res.on('close', () => end());
  }

  const server = createServer(handleWith(handle, storeError));
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
      for (const w of [...watches]) w.stop();
      await bound.close();
      try {
        unlinkSync(opts.socketPath);
      } catch {
        // already gone
      }
    },
  };
}
