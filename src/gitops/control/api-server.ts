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
// Errors: {error, code, message} as grpc-gateway writes them (code: gRPC status).
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { isStraitError, type StraitError } from '../../base/errors/index.js';
import { silentLogger } from '../../base/log/index.js';
import { normalizeKeyID } from '../../platform/signatures/index.js';
import { checkToken, issueToken, passwordMatches, type AdminAccount } from './admin.js';
import type { GitOpsController } from './controller.js';
import type { Application } from './types.js';
import { startListening } from '../../base/net/index.js';

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

class HttpError extends Error {
  constructor(readonly status: number, readonly grpc: number, message: string) { super(message); }
}

const GRPC = { invalidArgument: 3, notFound: 5, alreadyExists: 6, permissionDenied: 7, unauthenticated: 16, internal: 13, unavailable: 14 };

function fromStrait(err: StraitError): HttpError {
  switch (err.exitCode) {
    case 2: return new HttpError(400, GRPC.invalidArgument, err.message);
    case 3: return new HttpError(404, GRPC.notFound, err.message);
    case 4: return new HttpError(409, GRPC.alreadyExists, err.message);
    case 6: return new HttpError(401, GRPC.unauthenticated, err.message);
    case 5: return new HttpError(503, GRPC.unavailable, err.message);
    default: return new HttpError(500, GRPC.internal, err.message);
  }
}

async function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw new HttpError(413, GRPC.invalidArgument, `request body larger than ${limit} bytes`);
    chunks.push(c as Buffer);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, GRPC.invalidArgument, 'request body is not valid JSON');
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
  const { controller, account } = opts;
  const keys = controller.keys;

  const authed = (req: IncomingMessage): string => {
    const t = tokenOf(req);
    const user = t ? checkToken(account, t) : undefined;
    if (!user) throw new HttpError(401, GRPC.unauthenticated, 'no session information');
    return user;
  };

  const getApp = async (name: string): Promise<Application> => {
    const app = await controller.getApplication(name);
    if (!app) throw new HttpError(404, GRPC.notFound, `applications.argoproj.io "${name}" not found`);
    return app;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    if (path === '/api/v1/session' && method === 'POST') {
      const body = await readBody(req) as { username?: unknown; password?: unknown };
      const username = typeof body.username === 'string' ? body.username : '';
      const password = typeof body.password === 'string' ? body.password : '';
      if (!passwordMatches(account, username, password)) throw new HttpError(401, GRPC.unauthenticated, 'Invalid username or password');
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
      const body = await readBody(req, 8 * 1024 * 1024) as { repository?: { clone_url?: string; html_url?: string; ssh_url?: string } };
      for (const u of [body.repository?.clone_url, body.repository?.html_url]) if (typeof u === 'string' && u) controller.notifyPush(u);
      return send(res, 200, {});
    }
    if (path === '/api/v1/gpgkeys' || path.startsWith('/api/v1/gpgkeys/')) {
      authed(req);
      const idInPath = path.length > '/api/v1/gpgkeys/'.length ? decodeURIComponent(path.slice('/api/v1/gpgkeys/'.length)) : undefined;
      if (method === 'GET' && idInPath === undefined) return send(res, 200, { metadata: {}, items: keys.list() });
      if (method === 'GET') return send(res, 200, keys.get(idInPath as string));
      if (method === 'POST' && idInPath === undefined) {
        const body = await readBody(req) as { keyData?: unknown; publickey?: { keyData?: unknown } };
        const data = typeof body.keyData === 'string' ? body.keyData : typeof body.publickey?.keyData === 'string' ? body.publickey.keyData : '';
        const upsert = url.searchParams.get('upsert') === 'true';
        const r = await keys.add(data, upsert);
        return send(res, 200, { created: { metadata: {}, items: r.created }, skipped: r.skipped });
      }
      if (method === 'DELETE') {
        const id = idInPath ?? url.searchParams.get('keyID') ?? '';
        await keys.remove(normalizeKeyID(id));
        return send(res, 200, {});
      }
      throw new HttpError(405, GRPC.invalidArgument, `${method} is not allowed on ${path}`);
    }
    if (path === '/api/v1/applications' && method === 'GET') {
      authed(req);
      return send(res, 200, { metadata: {}, items: await controller.listApplications() });
    }
    const appMatch = /^\/api\/v1\/applications\/([^/]+)(\/sync)?$/.exec(path);
    if (appMatch) {
      authed(req);
      const name = decodeURIComponent(appMatch[1] ?? '');
      if (appMatch[2] && method === 'POST') {
        await getApp(name);
        await controller.syncNow(name);
        return send(res, 200, await getApp(name));
      }
      if (!appMatch[2] && method === 'GET') {
        if (url.searchParams.get('refresh')) await controller.refresh(name);
        return send(res, 200, await getApp(name));
      }
    }
    throw new HttpError(404, GRPC.notFound, `no route for ${method} ${path}`);
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      const e = err instanceof HttpError ? err : isStraitError(err) ? fromStrait(err) : new HttpError(500, GRPC.internal, String((err as Error)?.message ?? err));
      if (e.status >= 500) log.warn({ err }, 'API request failed');
      // a body we stopped reading leaves the connection unusable: close it after the answer
      if (e.status === 413 && !res.headersSent) res.setHeader('connection', 'close');
      if (!res.headersSent) send(res, e.status, { error: e.message, code: e.grpc, message: e.message });
      else res.end();
    });
  };
  const server = opts.tls ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, listener) : createHttpServer(listener);
  const port = (await startListening(server, { port: opts.port ?? 8080, host: opts.host ?? '127.0.0.1' }) as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  return {
    server, port,
    url: `${opts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

