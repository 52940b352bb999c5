// The control module's HTTP API (port 8080; TLS optional), with Argo CD's shapes:
//   POST   /api/v1/session                 {username, password} -> {token} (and the argocd.token cookie)
//   DELETE /api/v1/session                 -> {token: ''} (the cookie is cleared)
//   GET    /api/v1/session/userinfo        -> {loggedIn, username}
//   GET    /api/v1/gpgkeys                 -> {metadata: {}, items: [GnuPGPublicKey]}
//   GET    /api/v1/gpgkeys/{keyID}         -> GnuPGPublicKey
//   POST   /api/v1/gpgkeys[?upsert=true]   GnuPGPublicKey {keyData} -> {created: {items}, skipped: [keyID]}
//   DELETE /api/v1/gpgkeys?keyID=ID  and  DELETE /api/v1/gpgkeys/{keyID} -> {}
//   GET    /api/v1/sshsigners              -> {metadata: {}, items: [SshSignerInfo]}        (strait extension)
//   POST   /api/v1/sshsigners[?upsert=true] {allowedSigners: "<allowed_signers lines>"}
//                                          -> {created: {items}, skipped: [fingerprint]}
//   DELETE /api/v1/sshsigners?fingerprint=SHA256:… -> {}
//   GET    /api/v1/applications[/{name}]   -> Application(List)
//   POST   /api/v1/applications/{name}/sync -> Application (after the sync attempt)
//   GET    /api/v1/projects[/{name}]       -> AppProject(List)
//   POST   /api/v1/projects                {project, upsert} -> AppProject
//   PUT    /api/v1/projects/{name}         {project} -> AppProject (merged into the stored one: a field
//                                          left out is kept, null removes it; spec.sourceIntegrity too)
//   POST   /api/webhook                    a Gitea/GitHub push payload -> immediate refresh
//                                          (signed when argocd-secret has webhook.gitea/github.secret)
// Failed logins are limited per user and client address (login-limiter.ts).
// The same port serves Argo CD's gRPC and gRPC-web services (argocd-rpc.ts) over the same
// handlers (api-handlers.ts); api-listener.ts picks HTTP/1.1 or HTTP/2 per connection.
// Errors: {error, code, message} as grpc-gateway writes them; HTTP and gRPC status (code)
// come from the error's kind (docs/errors.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'node:net';
import type { Logger } from 'pino';
import { E, grpcStatusOf } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import {
  HttpError,
  MAX_JSON_DEPTH,
  decodeComponent,
  handleWith,
  parseJsonObject,
  readBody as readRequestBody,
  readJsonBody,
  requestTarget,
  sendJson,
  toHttpError,
  browserWriteRefusal,
  httpStatusOf,
  type ErrorAnswer,
  type RequestTarget,
} from '../../platform/http/index.js';
import { ADMIN_USER, checkToken, type AdminAccount } from './admin.js';
import { createApiHandlers, type Json } from './api-handlers.js';
import { listenApi, type AnyRequest, type AnyResponse } from './api-listener.js';
import { createArgoRpcHandler } from './argocd-rpc.js';
import type { GitOpsController } from './controller.js';
import type { LoginLimits } from './login-limiter.js';
import { webhookRefusal, type WebhookSecrets } from './webhook-auth.js';

export interface ApiServerOptions {
  controller: GitOpsController;
  account: AdminAccount;
  host?: string;
  port?: number;
  /** PEM certificate and key; without them the API speaks plain HTTP */
  tls?: { cert: string; key: string };
  log?: Logger;
  /** the webhook shared secrets, read per webhook (none: webhooks are unauthenticated refresh triggers) */
  webhookSecrets?: () => Promise<WebhookSecrets>;
  /** failed-login limits (Argo CD's defaults: 5 failures in 300 s) */
  loginLimits?: LoginLimits;
  /** more handlers on the same port, behind the same session (the web console: src/console) */
  mounts?: ApiMount[];
}

/** Who calls a mounted handler, from the same session token as the API's own calls. */
export interface ApiCaller {
  /** the session's user; undefined: not logged in (or a forged or expired token) */
  user: string | undefined;
  /** whether the user may act (sync, refresh, change resources), as the API's own actions allow */
  mayAct: boolean;
}

/** A handler mounted on the API's port: it answers the paths it serves, errors in its own shape. */
export interface ApiMount {
  serves(path: string, method: string): boolean;
  /** the routes it serves (path templates: {name} is one segment) */
  routes: readonly { method: string; path: string }[];
  handle(req: IncomingMessage, res: ServerResponse, caller: ApiCaller): void;
  close?(): void | Promise<void>;
}

export interface ApiServer {
  server: Server;
  port: number;
  url: string;
  /** every route the port serves: the REST API's, the mounts' and the RPCs (POST /<service>/<method>) */
  routes: readonly { method: string; path: string; via: 'rest' | 'mount' | 'rpc' }[];
  close(): Promise<void>;
}

/** Argo CD's error body: {error, code, message}, code the gRPC status of the error's kind (docs/errors.md). */
function argoError(e: HttpError): ErrorAnswer {
  return { status: e.status, body: { error: e.message, code: grpcStatusOf(e.kind).code, message: e.message }, code: e.code };
}

const readBody = (req: IncomingMessage, limit = 1024 * 1024): Promise<Record<string, unknown>> => readJsonBody(req, { limit, emptyIsObject: true });
const send = (res: ServerResponse, status: number, body: unknown): void => sendJson(res, status, body);

/** The browser session's cookie (HttpOnly, SameSite=Strict, Secure with TLS; writes with it: browser-writes.ts). */
export const SESSION_COOKIE = 'argocd.token';

function tokenOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  const cookie = req.headers.cookie ?? '';
  const m = /(?:^|;\s*)argocd\.token=([^;]+)/.exec(cookie);
  return m?.[1];
}

/** One REST route: its method, its path template ({name}: one segment, decoded), what it does. */
interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** checked before the method is (a 405 on these paths needs a session first) */
  auth?: (req: IncomingMessage) => void;
  run(req: IncomingMessage, res: ServerResponse, params: Record<string, string>, url: RequestTarget): Promise<void>;
}
interface RouteMatcher {
  route: Route;
  re: RegExp;
}

const templateRegExp = (template: string): RegExp =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([A-Za-z]+)\}/g, '(?<$1>[^/]+)')}$`);

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const log = opts.log ?? silentLogger();
  const { controller } = opts;
  const api = createApiHandlers(controller, opts.account, { log, ...(opts.loginLimits ? { loginLimits: opts.loginLimits } : {}) });
  /** run an Argo CD RPC's handler for a REST request (the same code as the gRPC transport) */
  const rpc = async (name: string, req: IncomingMessage, body: Json): Promise<Json> => {
    const h = api.unary[name]!;
    const caller = { token: tokenOf(req), addr: req.socket.remoteAddress ?? '' };
    if (h.auth) api.user(caller);
    return h.call(body, caller);
  };

  const mounts = opts.mounts ?? [];
  const callerOf = (req: IncomingMessage): ApiCaller => {
    const token = tokenOf(req);
    const user = token ? checkToken(opts.account, token) : undefined;
    // the API's own actions need a session of a known user (admin is the one account)
    return { user, mayAct: user === ADMIN_USER };
  };

  const sessionCookie = (value: string, extra = ''): string =>
    `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${opts.tls ? '; Secure' : ''}${extra}`;
  const gpgkeysUser = (req: IncomingMessage): void => void api.user({ token: tokenOf(req), addr: '' });
  // every REST route (the dispatcher below walks this table; ApiServer.routes lists it)
  const routes: Route[] = [
    {
      method: 'POST',
      path: '/api/v1/session',
      run: async (req, res) => {
        const r = await rpc('session.SessionService/Create', req, await readBody(req));
        res.setHeader('set-cookie', sessionCookie(String(r['token'])));
        send(res, 200, r);
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/session',
      run: async (req, res) => {
        // tokens are stateless: logging out forgets the cookie (a client holding the token may still use it until it expires)
        res.setHeader('set-cookie', sessionCookie('', '; Max-Age=0'));
        send(res, 200, await rpc('session.SessionService/Delete', req, {}));
      },
    },
    { method: 'GET', path: '/api/v1/session/userinfo', run: async (req, res) => send(res, 200, await rpc('session.SessionService/GetUserInfo', req, {})) },
    {
      method: 'POST',
      path: '/api/webhook',
      run: async (req, res) => {
        const raw = await readRequestBody(req, 8 * 1024 * 1024);
        const refusal = webhookRefusal(req.headers, raw, opts.webhookSecrets ? await opts.webhookSecrets() : {});
        if (refusal) {
          log.info({ addr: req.socket.remoteAddress, refusal }, 'webhook refused');
          throw new HttpError(E.webhookRefused, `Webhook processing failed: ${refusal}`);
        }
        const body = parseJsonObject(raw.toString('utf8'), MAX_JSON_DEPTH, true) as {
          repository?: { clone_url?: string; html_url?: string; ssh_url?: string };
        };
        for (const u of [body.repository?.clone_url, body.repository?.html_url]) if (typeof u === 'string' && u) controller.notifyPush(u);
        send(res, 200, {});
      },
    },
    { method: 'GET', path: '/api/v1/gpgkeys', auth: gpgkeysUser, run: async (req, res) => send(res, 200, await rpc('gpgkey.GPGKeyService/List', req, {})) },
    {
      method: 'GET',
      path: '/api/v1/gpgkeys/{keyID}',
      auth: gpgkeysUser,
      run: async (req, res, p) => send(res, 200, await rpc('gpgkey.GPGKeyService/Get', req, { keyID: p['keyID'] })),
    },
    {
      method: 'POST',
      path: '/api/v1/gpgkeys',
      auth: gpgkeysUser,
      run: async (req, res, _p, url) => {
        const body = await readBody(req);
        send(res, 200, await rpc('gpgkey.GPGKeyService/Create', req, { publickey: body['publickey'] ?? body, upsert: url.query.get('upsert') === 'true' }));
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/gpgkeys',
      auth: gpgkeysUser,
      run: async (req, res, _p, url) => send(res, 200, await rpc('gpgkey.GPGKeyService/Delete', req, { keyID: url.query.get('keyID') ?? '' })),
    },
    {
      method: 'DELETE',
      path: '/api/v1/gpgkeys/{keyID}',
      auth: gpgkeysUser,
      run: async (req, res, p) => send(res, 200, await rpc('gpgkey.GPGKeyService/Delete', req, { keyID: p['keyID'] })),
    },
    {
      method: 'GET',
      path: '/api/v1/sshsigners',
      auth: gpgkeysUser,
      run: async (req, res) => send(res, 200, await rpc('strait.SshSignerService/List', req, {})),
    },
    {
      method: 'POST',
      path: '/api/v1/sshsigners',
      auth: gpgkeysUser,
      run: async (req, res, _p, url) => {
        const body = await readBody(req);
        send(
          res,
          200,
          await rpc('strait.SshSignerService/Create', req, { allowedSigners: body['allowedSigners'] ?? '', upsert: url.query.get('upsert') === 'true' }),
        );
      },
    },
    {
      method: 'DELETE',
      path: '/api/v1/sshsigners',
      auth: gpgkeysUser,
      run: async (req, res, _p, url) => send(res, 200, await rpc('strait.SshSignerService/Delete', req, { fingerprint: url.query.get('fingerprint') ?? '' })),
    },
    { method: 'GET', path: '/api/v1/applications', run: async (req, res) => send(res, 200, await rpc('application.ApplicationService/List', req, {})) },
    {
      method: 'GET',
      path: '/api/v1/applications/{name}',
      run: async (req, res, p, url) =>
        send(res, 200, await rpc('application.ApplicationService/Get', req, { name: p['name'], refresh: url.query.get('refresh') ?? '' })),
    },
    {
      method: 'POST',
      path: '/api/v1/applications/{name}/sync',
      run: async (req, res, p) => send(res, 200, await rpc('application.ApplicationService/Sync', req, { name: p['name'] })),
    },
    { method: 'GET', path: '/api/v1/projects', run: async (req, res) => send(res, 200, await rpc('project.ProjectService/List', req, {})) },
    { method: 'POST', path: '/api/v1/projects', run: async (req, res) => send(res, 200, await rpc('project.ProjectService/Create', req, await readBody(req))) },
    {
      method: 'GET',
      path: '/api/v1/projects/{name}',
      run: async (req, res, p) => send(res, 200, await rpc('project.ProjectService/Get', req, { name: p['name'] })),
    },
    {
      method: 'PUT',
      path: '/api/v1/projects/{name}',
      run: async (req, res, pp) => {
        // grpc-gateway's route is /api/v1/projects/{project.metadata.name}: the path names the project
        const name = pp['name'] ?? '';
        const body = await readBody(req);
        const p = body['project'];
        if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new HttpError(E.apiRequestInvalid, 'project is required');
        const meta = (p as { metadata?: { name?: unknown } }).metadata ?? {};
        if (meta.name !== undefined && meta.name !== name)
          throw new HttpError(E.apiRequestInvalid, `project.metadata.name ${JSON.stringify(meta.name)} does not match the path's ${JSON.stringify(name)}`);
        send(res, 200, await rpc('project.ProjectService/Update', req, { project: { ...p, metadata: { ...meta, name } } }));
      },
    },
    { method: 'GET', path: '/api/version', run: async (req, res) => send(res, 200, await rpc('version.VersionService/Version', req, {})) },
    { method: 'GET', path: '/api/v1/settings', run: async (req, res) => send(res, 200, await rpc('cluster.SettingsService/Get', req, {})) },
  ];
  const matchers = routes.map((r) => ({ route: r, re: templateRegExp(r.path) }));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = requestTarget(req);
    const method = req.method ?? 'GET';
    const mount = mounts.find((m) => m.serves(url.path, method));
    if (mount) return mount.handle(req, res, callerOf(req));
    const path = url.path.replace(/\/+$/, '');
    let pathKnown: RouteMatcher | undefined;
    for (const m of matchers) {
      const hit = m.re.exec(path);
      if (!hit) continue;
      pathKnown ??= m;
      if (m.route.method !== method) continue;
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(hit.groups ?? {})) params[k] = decodeComponent(v);
      m.route.auth?.(req);
      return m.route.run(req, res, params, url);
    }
    // a path with routes, but not for this method (after the session those routes need)
    if (pathKnown) {
      pathKnown.route.auth?.(req);
      if (pathKnown.route.auth) throw new HttpError(E.httpMethodNotAllowed, `${method} is not allowed on ${path}`);
    }
    throw new HttpError(E.httpNoRoute, `no route for ${method} ${path}`);
  };

  const listener = handleWith(handle, (err) => {
    const e = toHttpError(err);
    if (e.status >= 500) log.warn({ err }, 'API request failed');
    return argoError(e);
  });
  const host = opts.host ?? '127.0.0.1';
  // REST requests come over HTTP/1.1 or HTTP/2 (compat API: the same calls)
  const rest = listener as unknown as (req: AnyRequest, res: AnyResponse) => void;
  const rpcOrRest = createArgoRpcHandler(api, rest);
  // the front door: every request of every transport (REST, the console's store API, gRPC, gRPC-web)
  // passes the one check of writes made with the browser's session cookie (platform/http/browser-writes.ts)
  const tls = opts.tls !== undefined;
  const front = (req: AnyRequest, res: AnyResponse): void => {
    const refusal = browserWriteRefusal(req, { cookie: SESSION_COOKIE, tls, jsonBody: (path) => !rpcOrRest.servesRpc(path) });
    if (!refusal) return rpcOrRest(req, res);
    log.info({ addr: req.socket?.remoteAddress, code: refusal.code, detail: refusal.detail }, 'browser write refused');
    const status = httpStatusOf(refusal);
    const body = JSON.stringify({ error: refusal.message, code: grpcStatusOf(refusal.kind).code, message: refusal.message, straitCode: refusal.code });
    const r = res as ServerResponse;
    if (!req.complete && req.httpVersionMajor === 1) r.setHeader('connection', 'close');
    r.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    r.end(body);
  };
  const bound = await listenApi(front, { host, port: opts.port ?? 8080, tls: opts.tls });
  return {
    server: bound.server,
    port: bound.port,
    routes: [
      ...routes.map((r) => ({ method: r.method, path: r.path, via: 'rest' as const })),
      ...mounts.flatMap((m) => m.routes.map((r) => ({ ...r, via: 'mount' as const }))),
      ...[...rpcOrRest.rpcPaths].map((path) => ({ method: 'POST', path, via: 'rpc' as const })),
    ],
    url: `${opts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${bound.port}`,
    close: async () => {
      for (const m of mounts) await m.close?.();
      await bound.close();
    },
  };
}
