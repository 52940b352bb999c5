// One spelling per repository, for comparing an Application's repoURL with a
// project's sourceRepos patterns and sourceIntegrity policies, and with push
// notifications. Argo CD's NormalizeGitURL (lower case, scp-like "user@host:path" as
// ssh://, no trailing ".git") plus what makes two spellings of one location compare
// equal: user info dropped ("https://x@host/..." is the same repository as
// "https://host/..."), the host as a WHATWG URL parser reads it for http(s) (numeric
// IPv4 forms, percent-encoding) and without trailing dots ("host."), the port as a
// number and dropped when it is the scheme's default (":0443" is ":443" is none),
// percent-encoded unreserved characters decoded, "\" as "/" in http(s) paths,
// repeated slashes as one, trailing slashes dropped. A URL whose path has a dot segment
// ("." or "..", also percent-encoded) or an encoded "/" or "\" is refused, not
// normalized: servers and git resolve those differently, so
// "http://host/alice/../bob/repo" must not be judged as one repository and fetched as
// another. repoIdentity() also takes http and https as one repository (a policy's
// scheme must not decide whether it applies; source-integrity.ts).
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443', ssh: '22', git: '9418' };
const UNRESERVED = /^[a-z0-9\-._~]$/;

/**
 * host[:port] without user info, trailing dots or a default port; for http(s) the host
 * and port as a WHATWG URL parser reads them (the text as written when it does not
 * parse, e.g. a glob pattern).
 */
function canonicalAuthority(scheme: string, raw: string): string {
  const at = raw.lastIndexOf('@');
  let hostPort = at >= 0 ? raw.slice(at + 1) : raw;
  if (scheme === 'http' || scheme === 'https') {
    try {
      const u = new URL(`${scheme}://${hostPort}/`);
      hostPort = u.port ? `${u.hostname}:${u.port}` : u.hostname;
    } catch {
      // not a host a URL parser takes (a glob, say): normalized as text below
    }
  }
  const pm = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort);
  let host = pm?.[1] ?? hostPort;
  let port = pm?.[2] ?? '';
  host = host.replace(/\.+$/, '');
  if (/^\d+$/.test(port)) port = String(Number(port));
  if (port === '' || port === DEFAULT_PORTS[scheme]) return host;
  return `${host}:${port}`;
}

export type NormalizedRepoURL = { url: string; error?: undefined } | { url?: undefined; error: string };

export function normalizeRepoURL(raw: string): NormalizedRepoURL {
  let s = raw.trim().toLowerCase();
  if (!s.includes('://')) {
    // scp-like "git@host:org/repo" (a colon before any slash, not a Windows drive)
    const scp = /^([^/:@]+@)?([^/:]{2,}):(?!\/\/)(.*)$/.exec(s);
    if (scp) s = `ssh://${scp[1] ?? ''}${scp[2]}/${(scp[3] ?? '').replace(/^\/+/, '')}`;
  }
  let prefix = '';
  let path = s;
  let tail = '';
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\\]*)([^?#]*)(.*)$/.exec(s);
  if (m) {
    const scheme = m[1] as string;
    prefix = `${scheme}://${canonicalAuthority(scheme, m[2] as string)}`;
    path = m[3] as string;
    tail = m[4] as string;
    if (scheme === 'http' || scheme === 'https') path = path.replace(/\\/g, '/');
  }
  path = path.replace(/%([0-9a-f]{2})/g, (enc, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : enc;
  });
  if (/%2f|%5c/.test(path)) return { error: 'its path has an encoded "/" or "\\"' };
  if (path.split('/').some((seg) => seg === '.' || seg === '..')) return { error: 'its path has a "." or ".." segment' };
  if (m) path = path.replace(/\/{2,}/g, '/');
  path = path
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  return { url: `${prefix}${path}${tail}` };
}

/**
 * The repository a URL names, for deciding which source integrity policy applies: the
 * normalized URL with http and https as one scheme (the same host, port and path are
 * the same repository whichever scheme a URL spells).
 */
export function repoIdentity(raw: string): NormalizedRepoURL {
  const n = normalizeRepoURL(raw);
  return n.url === undefined ? n : { url: n.url.replace(/^http:\/\//, 'https://') };
}

/** True when two repository URLs name the same repository (both must be valid). */
export function sameRepoURL(a: string, b: string): boolean {
  const x = normalizeRepoURL(a);
  const y = normalizeRepoURL(b);
  return x.url !== undefined && x.url === y.url;
}

/** git's `url.<base>.insteadOf <prefix>` rules given through the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n) */
export interface InsteadOf {
  base: string;
  prefix: string;
}

export function insteadOfRules(env: NodeJS.ProcessEnv): InsteadOf[] {
  const n = Number(env['GIT_CONFIG_COUNT'] ?? 0);
  const out: InsteadOf[] = [];
  for (let i = 0; Number.isInteger(n) && i < Math.min(n, 100); i++) {
    const m = /^url\.(.+)\.insteadof$/i.exec(env[`GIT_CONFIG_KEY_${i}`] ?? '');
    const prefix = env[`GIT_CONFIG_VALUE_${i}`];
    if (m && m[1] && prefix) out.push({ base: m[1], prefix });
  }
  return out;
}

/** A URL as git fetches it under those rules: the longest matching prefix replaced by its base (git-config(1)). */
export function rewriteRepoURL(url: string, rules: readonly InsteadOf[]): string {
  let best: InsteadOf | undefined;
  for (const r of rules) if (url.startsWith(r.prefix) && (!best || r.prefix.length > best.prefix.length)) best = r;
  return best ? best.base + url.slice(best.prefix.length) : url;
}
