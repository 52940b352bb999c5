// The one check that a state-changing request carrying a browser session cookie comes from
// the page this server serves (CSRF). `SameSite=Strict` stops other *sites*, but another port
// of the same host or a sibling subdomain is the same site: only the origin tells them apart.
//
//   - GET, HEAD and OPTIONS pass (they change nothing);
//   - a request without the session cookie passes: a CLI, curl, a webhook or git authenticate
//     with Authorization (Bearer, Basic) or gRPC metadata, which a page of another origin can
//     only send after a CORS preflight these servers never answer;
//   - with the cookie: `Origin` must be the serving origin (scheme, host and port the request
//     was addressed to: `Host`, or HTTP/2's `:authority`; a server without TLS of its own takes
//     `https://` of the same authority too, for a proxy in front that terminates TLS, as
//     Argo CD's `--insecure` mode is run); `Origin: null` (sent after a
//     cross-origin redirect, from sandboxed frames and file: pages) is refused; a request
//     without `Origin` passes only with `Sec-Fetch-Site: same-origin`;
//   - with the cookie, POST, PUT and PATCH must be `application/json` (a form cannot send it
//     without a preflight).
import { E, type StraitError } from '../../base/errors/index.js';

export interface BrowserWriteRequest {
  method?: string | undefined;
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/** The methods that change nothing. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Whether the request carries the named cookie (with any value). */
export function carriesCookie(headers: BrowserWriteRequest['headers'], name: string): boolean {
  const raw = headers['cookie'];
  const all = Array.isArray(raw) ? raw.join('; ') : (raw ?? '');
  return all.split(';').some((c) => c.trim().startsWith(`${name}=`));
}

/** The origin a request was addressed to: `https://` with TLS, the authority (HTTP/2) or Host (HTTP/1.1). */
export function servingOrigin(req: BrowserWriteRequest, tls: boolean): string | undefined {
  const authority = one(req.headers[':authority']) ?? one(req.headers['host']);
  if (!authority) return undefined;
  try {
    return new URL(`${tls ? 'https' : 'http'}://${authority}`).origin;
  } catch {
    return undefined;
  }
}

/**
 * undefined when the request may go on; otherwise the StraitError to answer with
 * (STRAIT_ERR_CROSS_ORIGIN, or STRAIT_ERR_CONTENT_TYPE for a cookie write that is not JSON).
 * `jsonBody(path)`: whether the path takes JSON (false for transports with their own content
 * types, such as gRPC, which take no cookie).
 */
export function browserWriteRefusal(
  req: BrowserWriteRequest,
  opts: { cookie: string; tls: boolean; jsonBody?: (path: string) => boolean },
): StraitError | undefined {
  const method = (req.method ?? 'GET').toUpperCase();
  if (SAFE_METHODS.has(method) || !carriesCookie(req.headers, opts.cookie)) return undefined;
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const serving = servingOrigin(req, opts.tls) ?? '';
  const origin = one(req.headers['origin']);
  if (origin !== undefined) {
    let given: string | undefined;
    try {
      const u = new URL(origin);
      given = u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
    } catch {
      given = undefined;
    }
    const behindProxy = !opts.tls && serving !== '' && given === `https://${serving.slice('http://'.length)}`;
    if (!serving || (given !== serving && !behindProxy)) return E.crossOriginWrite(method, path, origin, serving);
  } else if (one(req.headers['sec-fetch-site']) !== 'same-origin') {
    return E.crossOriginWrite(method, path, '', serving);
  }
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
    const type = (one(req.headers['content-type']) ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && (opts.jsonBody?.(path) ?? true)) return E.contentTypeRefused(method, path, type);
  }
  return undefined;
}
