// The control module's HTTP API (port 8080; TLS optional), with Argo CD's shapes:
//   POST   /api/v1/session                 {username, password} -> {token}
//   GET    /api/v1/session/userinfo        -> {loggedIn, username}
//   GET    /api/v1/gpgkeys                 -> {metadata: {}, items: [GnuPGPublicKey]}
//   GET    /api/v1/gpgkeys/{keyID}         -> GnuPGPublicKey
//   POST   /api/v1/gpgkeys[?upsert=true]   GnuPGPublicKey {keyData} -> {created: {items}, skipped: [keyID]}
//   DELETE /api/v1/gpgkeys?keyID=ID  and  DELETE /api/v1/gpgkeys/{keyID} -> {}
//   GET    /api/v1/applications[/{name}]   -> Application(List)
//   POST   /api/v1/applications/{name}/sync -> Application (after the sync attempt)
//   POST   /api/webhook                    a Gitea/GitHub push payload -> immediate refresh
// The same port serves Argo CD's gRPC and gRPC-web services (argocd-rpc.ts) over the same
// handlers (api-handlers.ts); api-listener.ts picks HTTP/1.1 or HTTP/2 per connection.
// Errors: {error, code, message} as grpc-gateway writes them; HTTP and gRPC status (code)
// come from the error's kind (docs/errors.md).
import type { Server } from 'node:net';
import type { Logger } from 'pino';
import { grpcStatusOf, httpStatusOf, type ErrorKind } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import type { AdminAccount } from './admin.js';
import { createApiHandlers, errorKindOf, type Json } from './api-handlers.js';
import { listenApi, type AnyRequest as IncomingMessage, type AnyResponse as ServerResponse } from './api-listener.js';
import { createArgoRpcHandler } from './argocd-rpc.js';
import type { GitOpsController } from './controller.js';

export interface ApiServerOptions {
  controller: GitOpsController;
  account: AdminAccount;
  host?: string;
  port?: number;
  /** PEM certificate and key; without them the API speaks plain HTTP */
  tls?: { cert: string; key: string };
  log?: Logger;
}

export interface ApiServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** An answer of this API: HTTP and gRPC status come from the kind (docs/errors.md); `status`
 *  overrides the HTTP one where HTTP has a more precise status (405, 413). */
class HttpError extends Error {
  readonly grpc: number;
  constructor(kind: ErrorKind, message: string, readonly status = httpStatusOf(kind)) {
    super(message);
    this.grpc = grpcStatusOf(kind).code;
  }
}

async function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw new HttpError('usage', `request body larger than ${limit} bytes`, 413);
    chunks.push(c as Buffer);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError('usage', 'request body is not valid JSON');
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function tokenOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  const cookie = req.headers.cookie ?? '';
  const m = /(?:^|;\s*)argocd\.token=([^;]+)/.exec(cookie);
  return m?.[1];
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const log = opts.log ?? silentLogger();
  const { controller } = opts;
  const api = createApiHandlers(controller, opts.account);
  /** run an Argo CD RPC's handler for a REST request (same code as the gRPC transport) */
  const rpc = async (name: string, req: IncomingMessage, body: Json): Promise<Json> => {
    const h = api.unary[name]!;
    const caller = { token: tokenOf(req) };
    if (h.auth) api.user(caller);
    return h.call(body, caller);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (path === '/api/v1/session' && method === 'POST') {
      const r = await rpc('session.SessionService/Create', req, await readBody(req) as Json);
      res.setHeader('set-cookie', `argocd.token=${String(r['token'])}; Path=/; HttpOnly; SameSite=Strict`);
      return send(res, 200, r);
    }
    if (path === '/api/v1/session/userinfo' && method === 'GET') return send(res, 200, await rpc('session.SessionService/GetUserInfo', req, {}));
    if (path === '/api/webhook' && method === 'POST') {
      const body = await readBody(req, 8 * 1024 * 1024) as { repository?: { clone_url?: string; html_url?: string; ssh_url?: string } };
      for (const u of [body.repository?.clone_url, body.repository?.html_url]) if (typeof u === 'string' && u) controller.notifyPush(u);
      return send(res, 200, {});
    }
    if (path === '/api/v1/gpgkeys' || path.startsWith('/api/v1/gpgkeys/')) {
      api.user({ token: tokenOf(req) });
      const idInPath = path.length > '/api/v1/gpgkeys/'.length ? decodeURIComponent(path.slice('/api/v1/gpgkeys/'.length)) : undefined;
      if (method === 'GET' && idInPath === undefined) return send(res, 200, await rpc('gpgkey.GPGKeyService/List', req, {}));
      if (method === 'GET') return send(res, 200, await rpc('gpgkey.GPGKeyService/Get', req, { keyID: idInPath }));
      if (method === 'POST' && idInPath === undefined) {
        const body = await readBody(req) as Json;
        return send(res, 200, await rpc('gpgkey.GPGKeyService/Create', req, { publickey: body['publickey'] ?? body, upsert: url.searchParams.get('upsert') === 'true' }));
      }
      if (method === 'DELETE') return send(res, 200, await rpc('gpgkey.GPGKeyService/Delete', req, { keyID: idInPath ?? url.searchParams.get('keyID') ?? '' }));
      throw new HttpError('usage', `${method} is not allowed on ${path}`, 405);
    }
    if (path === '/api/v1/applications' && method === 'GET') return send(res, 200, await rpc('application.ApplicationService/List', req, {}));
    const appMatch = /^\/api\/v1\/applications\/([^/]+)(\/sync)?$/.exec(path);
    if (appMatch) {
      const name = decodeURIComponent(appMatch[1] ?? '');
      if (appMatch[2] && method === 'POST') return send(res, 200, await rpc('application.ApplicationService/Sync', req, { name }));
      if (!appMatch[2] && method === 'GET') return send(res, 200, await rpc('application.ApplicationService/Get', req, { name, refresh: url.searchParams.get('refresh') ?? '' }));
    }
    if (path === '/api/v1/projects' && method === 'GET') return send(res, 200, await rpc('project.ProjectService/List', req, {}));
    const projMatch = /^\/api\/v1\/projects\/([^/]+)$/.exec(path);
    if (projMatch && method === 'GET') return send(res, 200, await rpc('project.ProjectService/Get', req, { name: decodeURIComponent(projMatch[1] ?? '') }));
    if (path === '/api/version' && method === 'GET') return send(res, 200, await rpc('version.VersionService/Version', req, {}));
    if (path === '/api/v1/settings' && method === 'GET') return send(res, 200, await rpc('cluster.SettingsService/Get', req, {}));
    throw new HttpError('notFound', `no route for ${method} ${path}`);
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      const e = err instanceof HttpError ? err : new HttpError(errorKindOf(err).kind, errorKindOf(err).message);
      if (e.status >= 500) log.warn({ err }, 'API request failed');
      // a body we stopped reading leaves an HTTP/1.1 connection unusable: close it after the answer
      if (e.status === 413 && !res.headersSent && req.httpVersionMajor === 1) res.setHeader('connection', 'close');
      if (!res.headersSent) send(res, e.status, { error: e.message, code: e.grpc, message: e.message });
      else res.end();
    });
  };
  const host = opts.host ?? '127.0.0.1';
  const l = await listenApi(createArgoRpcHandler(api, listener), { host, port: opts.port ?? 8080, tls: opts.tls });
  return {
    server: l.server, port: l.port,
    url: `${opts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${l.port}`,
    close: () => l.close(),
  };
}
