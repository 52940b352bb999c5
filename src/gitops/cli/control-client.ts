// Client of the control module's HTTP API for `strait login`, `strait gpg` and
// `strait app`. Sessions are kept in the user's config dir:
//   $STRAIT_CONFIG_DIR, else $XDG_CONFIG_HOME/strait, else ~/.config/strait
//   file: session.json (mode 0600) {current, contexts: {SERVER: {server, user, token, insecure, plaintext, grpcWeb}}}
// `strait login` speaks Argo CD's gRPC (HTTP/2; h2c with --plaintext), or gRPC-web with
// --grpc-web, as argocd does (sessionCreate below); the other commands use the REST shapes.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fromJson, toJson, type Message } from '@bufbuild/protobuf';
import { ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createGrpcTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { E } from '../../base/errors/index.js';
import { readInput, refuseWorldAddressFromHost, worldHostURL } from '../../platform/cli-kit/index.js';
import { argocdService } from '../wire/index.js';

export interface SessionContext {
  server: string;
  user: string;
  token: string;
  insecure: boolean;
  plaintext: boolean;
  grpcWeb: boolean;
}

interface SessionFile {
  current: string;
  contexts: Record<string, SessionContext>;
}

export function configDir(): string {
  const explicit = process.env['STRAIT_CONFIG_DIR'];
  if (explicit) return explicit;
  return join(process.env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'strait');
}

const sessionPath = (): string => join(configDir(), 'session.json');

function readSessions(): SessionFile {
  const p = sessionPath();
  if (!existsSync(p)) return { current: '', contexts: {} };
  try {
    return JSON.parse(readInput(p)) as SessionFile;
  } catch {
    return { current: '', contexts: {} };
  }
}

export function saveSession(ctx: SessionContext): void {
  const file = readSessions();
  file.contexts[ctx.server] = ctx;
  file.current = ctx.server;
  mkdirSync(configDir(), { recursive: true, mode: 0o700 });
  writeFileSync(sessionPath(), JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
  chmodSync(sessionPath(), 0o600);
}

export function currentSession(server?: string): SessionContext {
  const file = readSessions();
  const name = server ?? file.current;
  const ctx = name ? file.contexts[name] : undefined;
  if (!ctx) throw E.notLoggedIn(server ? `no session for server ${JSON.stringify(server)}` : 'not logged in to a control module');
  return ctx;
}

export function baseURL(server: string, plaintext: boolean): string {
  if (/^https?:\/\//.test(server)) return server.replace(/\/+$/, '');
  return `${plaintext ? 'http' : 'https'}://${server}`;
}

export interface ApiResponse {
  status: number;
  body: unknown;
}

export function apiRequest(
  ctx: { server: string; insecure: boolean; plaintext: boolean; token?: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse> {
  // a world-internal address (a session made inside a pod, or copied from the docs) is not
  // reachable from the host: say which host URL serves it instead of sending it off-host
  try {
    refuseWorldAddressFromHost(ctx.server);
  } catch (err) {
    return Promise.reject(err);
  }
  const url = new URL(baseURL(ctx.server, ctx.plaintext) + path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  if (ctx.token) headers['authorization'] = `Bearer ${ctx.token}`;
  const fn = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = fn(url, { method, headers, rejectUnauthorized: !ctx.insecure, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : {};
        } catch {
          /* keep the text */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out after 60 s')));
    req.on('error', (err: NodeJS.ErrnoException) => reject(E.controlApi(ctx.server, connectHint(ctx.server, `${err.code ?? ''} ${err.message}`, err.message))));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Call the API with the saved session; turns error answers into StraitErrors. */
export async function call<T>(method: string, path: string, body?: unknown, server?: string): Promise<T> {
  const ctx = currentSession(server);
  const r = await apiRequest(ctx, method, path, body);
  if (r.status >= 200 && r.status < 300) return r.body as T;
  const msg = typeof r.body === 'object' && r.body !== null && 'message' in r.body ? String((r.body as { message: unknown }).message) : String(r.body);
  if (r.status === 401) throw E.notLoggedIn(`the session for ${ctx.server} is not valid (${msg})`);
  if (r.status === 404) throw E.controlApiNotFound(ctx.server, msg);
  if (r.status === 400) throw E.usage(msg);
  throw E.controlApi(ctx.server, `HTTP ${r.status}: ${msg}`);
}

/**
 * What to do about a connection failure (`text`: the error's code, message and cause), in
 * one line: a TLS client that met a plain-HTTP server (OpenSSL's "wrong version number")
 * needs --plaintext; a refused or reset connection to a loopback address the local world no
 * longer uses names where its control API is now (its port moved when it was taken, and the
 * old port may be free or held by another program) and `strait status`.
 */
export function connectHint(server: string, text: string, message: string): string {
  if (/wrong.version.number|packet length too long|http request|ERR_SSL_WRONG_VERSION/i.test(text)) {
    return `the server speaks plain HTTP, not TLS: add --plaintext (strait login ${server.replace(/^https?:\/\//, '')} --plaintext …), not --insecure`;
  }
  const failure = /ECONNREFUSED/.test(text)
    ? 'connection refused'
    : /ECONNRESET|EPIPE|socket hang up|premature close/i.test(text)
      ? 'connection reset'
      : undefined;
  if (failure) {
    // a loopback address the world no longer uses: whatever is there now (nothing, or
    // another program that took the port) is not the control API
    const now = worldHostURL('control');
    const host = server.replace(/^https?:\/\//, '').replace(/\/.*$/, '');
    if (now && /^(127\.0\.0\.1|localhost):\d+$/.test(host) && new URL(now).host !== host) {
      return `${failure}: the local world's control API is now ${now} (\`strait status\` shows it); log in there: strait login ${new URL(now).host} --plaintext --username admin --password …`;
    }
    if (failure === 'connection refused')
      return "connection refused; is the control module running? (`strait status` shows where a local world's control API listens)";
  }
  if (/certificate|self.signed|SSL|EPROTO/i.test(text))
    return `${message}; use --insecure for a self-signed certificate, or --plaintext for a server without TLS`;
  return message;
}

/** A connection failure as argocd users know them, with what to do. */
function transportHint(server: string, err: unknown): Error {
  const message = err instanceof ConnectError ? err.rawMessage : String((err as Error)?.message ?? err);
  const cause = err instanceof ConnectError ? String((err.cause as Error | undefined)?.message ?? '') : '';
  const code = err instanceof ConnectError ? String((err.cause as NodeJS.ErrnoException | undefined)?.code ?? '') : '';
  return E.controlApi(server, connectHint(server, `${code} ${message} ${cause}`, message));
}

/** The transport argocd would use: gRPC over HTTP/2 (TLS, or h2c with --plaintext), or gRPC-web over HTTP/1.1. */
export function rpcTransport(ctx: { server: string; insecure: boolean; plaintext: boolean; grpcWeb: boolean; grpcWebRootPath?: string }): Transport {
  refuseWorldAddressFromHost(ctx.server);
  const root = (ctx.grpcWebRootPath ?? '').replace(/^\/+|\/+$/g, '');
  const baseUrl = baseURL(ctx.server, ctx.plaintext) + (root ? `/${root}` : '');
  const nodeOptions = { rejectUnauthorized: !ctx.insecure };
  return ctx.grpcWeb || root ? createGrpcWebTransport({ baseUrl, httpVersion: '1.1', nodeOptions }) : createGrpcTransport({ baseUrl, nodeOptions });
}

/** session.SessionService/Create over gRPC or gRPC-web: the session token, or loginFailed. */
export async function sessionCreate(
  ctx: { server: string; insecure: boolean; plaintext: boolean; grpcWeb: boolean; grpcWebRootPath?: string },
  username: string,
  password: string,
): Promise<string> {
  const svc = argocdService('session.SessionService');
  // an untyped service descriptor gives an untyped client: methods take and return Messages
  const client = createClient(svc, rpcTransport(ctx)) as unknown as Record<string, (req: Message, o: { timeoutMs: number }) => Promise<Message>>;
  const create = svc.method['create'];
  if (!create) throw E.internal('session.SessionService has no Create');
  try {
    const r = await client['create']!(fromJson(create.input, { username, password }), { timeoutMs: 60_000 });
    const token = (toJson(create.output, r) as { token?: unknown }).token;
    if (typeof token !== 'string' || !token) throw E.controlApi(ctx.server, 'login answered without a token');
    return token;
  } catch (err) {
    if (err instanceof ConnectError && err.code === 16) throw E.loginFailed(username);
    if (err instanceof ConnectError) throw transportHint(ctx.server, err);
    throw err;
  }
}
