// The web console on the control module's API port (as Argo CD serves its UI beside its
// API): its page and bundle under /console/, and the store API (the same handler and paths
// the CLI's store client uses: /v1/clusters/..., /v1/stream) behind the API's session
// instead of the store's token. GitOps data and actions are the control API's own routes
// (/api/v1/...), which the page calls directly. Nothing here computes a view: the page
// does, from the same objects `strait show`, `strait get` and `strait mesh` read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { E } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import type { ApiCaller, ApiMount } from '../../gitops/control/index.js';
import { httpStatusOf, requestTarget, sendJson } from '../../platform/http/index.js';
import { createStoreApi, STORE_ROUTES, WRITE_VERBS, type ResourceStore, type StoreOp } from '../../platform/store/index.js';
import { Assets, DEFAULT_ASSETS_DIR } from './assets.js';
import { kindTable, mayRead, mayWrite } from './kinds.js';

export interface ConsoleOptions {
  /** the stores the console shows: each cluster's and "broker"; may grow later (a join) */
  stores: ReadonlyMap<string, ResourceStore>;
  /** the cluster whose control module this is (its Applications, its namespace) */
  home: string;
  /** the control module's namespace (Applications, AppProjects) */
  namespace: string;
  /** where the built page is; default dist/console */
  assetsDir?: string;
  log?: Logger;
}

export const CONSOLE_PATH = '/console/';

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const kindText = (op: StoreOp): string => (op.kind ? `${op.kind.apiVersion}/${op.kind.kind}` : 'objects');

/** The console as a mount of the control module's API server. */
export function createConsole(opts: ConsoleOptions): ApiMount {
  const log = opts.log ?? silentLogger();
  const assets = new Assets(opts.assetsDir ?? DEFAULT_ASSETS_DIR, { kinds: kindTable(), home: opts.home, namespace: opts.namespace });
  if (!assets.built) log.warn({ dir: assets.dir }, 'the web console is not built: /console/ answers 503');
  const callers = new WeakMap<IncomingMessage, ApiCaller>();
  const store = createStoreApi({
    stores: opts.stores,
    authorize(req, op) {
      const caller = callers.get(req);
      if (!caller?.user) throw E.unauthorized('log in first: POST /api/v1/session, then send its token (the argocd.token cookie or Authorization: Bearer)');
      if (WRITE_VERBS.has(op.verb)) {
        if (!caller.mayAct) throw E.storeForbidden(op.verb, kindText(op), `user ${JSON.stringify(caller.user)} may not change resources`);
        if (op.verb !== 'apply' && op.verb !== 'delete') throw E.storeForbidden(op.verb, kindText(op), 'the console only applies and deletes');
        if (op.kind && !mayWrite(op.kind)) throw E.storeForbidden(op.verb, kindText(op), 'the console changes only ServiceExports and PeerAuthentications');
        // a write from a page of another origin was refused before this, at the port's front door
        // (src/platform/http/browser-writes.ts; every route it covers: ./browser-writes.ts)
        return;
      }
      if (op.kind && !mayRead(op.kind)) throw E.storeForbidden(op.verb, kindText(op), 'the console serves only the kinds its views show');
    },
  });

  function page(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (path === '/' || path === '/console') {
      res.writeHead(302, { location: CONSOLE_PATH, 'content-length': 0 });
      res.end();
      return;
    }
    if (!assets.built) {
      const e = E.consoleNotBuilt(assets.dir);
      sendJson(res, httpStatusOf(e), e.toJSON());
      return;
    }
    const rest = path.slice(CONSOLE_PATH.length);
    // a file of the bundle, or the page itself for every route of the page (#/... or /console/...)
    const asset = /^[a-z]+\.(js|css)$/.test(rest) ? assets.get(rest) : assets.get('index.html');
    if (!asset || (rest.includes('.') && !/^[a-z]+\.(js|css)$/.test(rest))) {
      sendJson(res, 404, E.notFound('file', rest).toJSON());
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const headers: Record<string, string | number> = {
      ...SECURITY_HEADERS,
      'content-type': asset.type,
      etag: asset.etag,
      'cache-control': 'no-cache',
      vary: 'accept-encoding',
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const body = gzip ? asset.gzip : asset.body;
    res.writeHead(200, { ...headers, 'content-length': body.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  return {
    routes: [...STORE_ROUTES, { method: 'GET', path: '/' }, { method: 'GET', path: '/console' }, { method: 'GET', path: `${CONSOLE_PATH}{file}` }],
    serves(path, method) {
      if (store.serves(path)) return true;
      return (method === 'GET' || method === 'HEAD') && (path === '/' || path === '/console' || path.startsWith(CONSOLE_PATH));
    },
    handle(req, res, caller) {
      const { path } = requestTarget(req);
      if (store.serves(path)) {
        callers.set(req, caller);
        store.listener(req, res);
        return;
      }
      page(req, res, path);
    },
    close() {
      store.close();
    },
  };
}
