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
//                                          (signed when argocd-secret has webhook.gitea/github.secret)
// Failed logins are limited per user and client address (login-limiter.ts).
// Errors: {error, code, message} as grpc-gateway writes them; HTTP and gRPC status (code)
// come from the error's kind (docs/errors.md).
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Logger } from 'pino';
import { grpcStatusOf, isStraitError } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { listenServer } from '../../base/net/index.js';
import {
  HttpError, MAX_JSON_DEPTH, decodeComponent, handleWith, parseJsonObject, readBody as readRequestBody, readJsonBody, requestTarget, sendJson, toHttpError, type ErrorAnswer, type HttpStatus,
} from '../../platform/http/index.js';
import { normalizeKeyID } from '../../platform/signatures/index.js';
import { checkToken, issueToken, passwordMatches, type AdminAccount } from './admin.js';
import type { GitOpsController } from './controller.js';
import { DEFAULT_LOGIN_LIMITS, LoginLimiter, type LoginLimits } from './login-limiter.js';
import type { Application } from './types.js';
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
}

/** Argo CD's bound on local user names (it keeps the failed-login table small). */
const MAX_USERNAME = 32;

export interface ApiServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

// the gRPC status grpc-gateway pairs with each HTTP status (google.golang.org/grpc/codes)
const GRPC: Partial<Record<HttpStatus, number>> = { 400: 3, 405: 3, 408: 4, 413: 3, 401: 16, 403: 7, 404: 5, 409: 6, 410: 5, 422: 3, 503: 14 };
const INTERNAL = 13;

/** Argo CD's error body: {error, code, message}, code the gRPC status. */
function argoError(e: HttpError, cause?: unknown): ErrorAnswer {
  // a StraitError's gRPC status comes from its kind (docs/errors.md); others from the HTTP status
  const code = isStraitError(cause) ? grpcStatusOf(cause.kind).code : GRPC[e.status] ?? INTERNAL;
  return { status: e.status, body: { error: e.message, code, message: e.message } };
}

const readBody = (req: IncomingMessage, limit = 1024 * 1024): Promise<Record<string, unknown>> =>
  readJsonBody(req, { limit, emptyIsObject: true });
const send = (res: ServerResponse, status: number, body: unknown): void => sendJson(res, status, body);

function tokenOf(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  const cookie = req.headers.cookie ?? '';
  const m = /(?:^|;\s*)argocd\.token=([^;]+)/.exec(cookie);
  return m?.[1];
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const log = opts.log ?? silentLogger();
  const { controller, account } = opts;
  const keys = controller.keys;
  const logins = new LoginLimiter(opts.loginLimits ?? DEFAULT_LOGIN_LIMITS);

  const authed = (req: IncomingMessage): string => {
    const t = tokenOf(req);
    const user = t ? checkToken(account, t) : undefined;
    if (!user) throw new HttpError(401, 'no session information');
    return user;
  };

  const getApp = async (name: string): Promise<Application> => {
    const app = await controller.getApplication(name);
    if (!app) throw new HttpError(404, `applications.argoproj.io "${name}" not found`);
    return app;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = requestTarget(req);
    const path = url.path.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (path === '/api/v1/session' && method === 'POST') {
      const body = await readBody(req) as { username?: unknown; password?: unknown };
      const username = typeof body.username === 'string' ? body.username : '';
      const password = typeof body.password === 'string' ? body.password : '';
      if (Buffer.byteLength(username) > MAX_USERNAME) throw new HttpError(400, `Username is too long (${MAX_USERNAME} bytes max)`);
      const addr = req.socket.remoteAddress ?? '';
      if (logins.blocked(username, addr)) {
        // as Argo CD: the same answer as a wrong password, and the password is not even checked
        log.warn({ username, addr }, 'login refused: too many failed logins');
        throw new HttpError(401, 'Invalid username or password');
      }
      if (!passwordMatches(account, username, password)) {
        logins.fail(username, addr);
        throw new HttpError(401, 'Invalid username or password');
      }
      logins.succeed(username, addr);
      const token = issueToken(account, username);
      res.setHeader('set-cookie', `argocd.token=${token}; Path=/; HttpOnly; SameSite=Strict`);
      return send(res, 200, { token });
    }
    if (path === '/api/v1/session/userinfo' && method === 'GET') {
      const t = tokenOf(req);
      const user = t ? checkToken(account, t) : undefined;
      return send(res, 200, user ? { loggedIn: true, username: user, iss: 'strait' } : { loggedIn: false });
    }
    if (path === '/api/webhook' && method === 'POST') {
      const raw = await readRequestBody(req, 8 * 1024 * 1024);
      const refusal = webhookRefusal(req.headers, raw, opts.webhookSecrets ? await opts.webhookSecrets() : {});
      if (refusal) {
        log.info({ addr: req.socket.remoteAddress, refusal }, 'webhook refused');
        throw new HttpError(400, `Webhook processing failed: ${refusal}`);
      }
      const body = parseJsonObject(raw.toString('utf8'), MAX_JSON_DEPTH, true) as { repository?: { clone_url?: string; html_url?: string; ssh_url?: string } };
      for (const u of [body.repository?.clone_url, body.repository?.html_url]) if (typeof u === 'string' && u) controller.notifyPush(u);
      return send(res, 200, {});
    }
    if (path === '/api/v1/gpgkeys' || path.startsWith('/api/v1/gpgkeys/')) {
      authed(req);
      const idInPath = path.length > '/api/v1/gpgkeys/'.length ? decodeComponent(path.slice('/api/v1/gpgkeys/'.length)) : undefined;
      if (method === 'GET' && idInPath === undefined) return send(res, 200, { metadata: {}, items: keys.list() });
      if (method === 'GET') return send(res, 200, keys.get(idInPath as string));
      if (method === 'POST' && idInPath === undefined) {
        const body = await readBody(req) as { keyData?: unknown; publickey?: { keyData?: unknown } };
        const data = typeof body.keyData === 'string' ? body.keyData : typeof body.publickey?.keyData === 'string' ? body.publickey.keyData : '';
        const upsert = url.query.get('upsert') === 'true';
        const r = await keys.add(data, upsert);
        return send(res, 200, { created: { metadata: {}, items: r.created }, skipped: r.skipped });
      }
      if (method === 'DELETE') {
        const id = idInPath ?? url.query.get('keyID') ?? '';
        await keys.remove(normalizeKeyID(id));
        return send(res, 200, {});
      }
      throw new HttpError(405, `${method} is not allowed on ${path}`);
    }
    if (path === '/api/v1/applications' && method === 'GET') {
      authed(req);
      return send(res, 200, { metadata: {}, items: await controller.listApplications() });
    }
    const appMatch = /^\/api\/v1\/applications\/([^/]+)(\/sync)?$/.exec(path);
    if (appMatch) {
      authed(req);
      const name = decodeComponent(appMatch[1] ?? '');
      if (appMatch[2] && method === 'POST') {
        await getApp(name);
        await controller.syncNow(name);
        return send(res, 200, await getApp(name));
      }
      if (!appMatch[2] && method === 'GET') {
        if (url.query.get('refresh')) await controller.refresh(name);
        return send(res, 200, await getApp(name));
      }
    }
    throw new HttpError(404, `no route for ${method} ${path}`);
  };

  const listener = handleWith(handle, (err) => {
    const e = toHttpError(err);
    if (e.status >= 500) log.warn({ err }, 'API request failed');
    return argoError(e, err);
  });
  const server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, listener) : createHttpServer(listener);
  const host = opts.host ?? '127.0.0.1';
  const bound = await listenServer(server, { port: opts.port ?? 8080, host });
  return {
    server, port: bound.port,
    url: `${opts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${bound.port}`,
    close: () => bound.close(),
  };
}

