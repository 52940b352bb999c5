// Client of the control module's HTTP API for `strait login`, `strait gpg` and
// `strait app`. Sessions are kept in the user's config dir:
//   $STRAIT_CONFIG_DIR, else $XDG_CONFIG_HOME/strait, else ~/.config/strait
//   file: session.json (mode 0600) {current, contexts: {SERVER: {server, user, token, insecure, plaintext, grpcWeb}}}
// --grpc-web is accepted for compatibility with argocd's CLI; strait always speaks JSON over HTTP/1.1.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { E } from '../../base/errors/index.js';
import { refuseWorldAddressFromHost } from '../../platform/cli-kit/index.js';

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
    return JSON.parse(readFileSync(p, 'utf8')) as SessionFile;
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

export function apiRequest(ctx: { server: string; insecure: boolean; plaintext: boolean; token?: string }, method: string, path: string, body?: unknown): Promise<ApiResponse> {
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
        try { parsed = text ? JSON.parse(text) : {}; } catch { /* keep the text */ }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out after 60 s')));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const hint = err.code === 'ECONNREFUSED' ? 'connection refused; is the control module running?'
        : /certificate|self.signed|SSL|wrong version/i.test(err.message) ? `${err.message}; use --insecure for a self-signed certificate, or --plaintext for a server without TLS`
        : err.message;
      reject(E.controlApi(ctx.server, hint));
    });
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
