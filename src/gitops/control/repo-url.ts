// One spelling per repository, for comparing an Application's repoURL with a
// project's sourceRepos patterns and with push notifications. Argo CD's
// NormalizeGitURL (lower case, scp-like "user@host:path" as ssh://, no trailing
// ".git") plus what makes two spellings of one location compare equal: default ports
// dropped, percent-encoded unreserved characters decoded, "\" as "/" in http(s)
// paths, trailing slashes dropped. A URL whose path has a dot segment ("." or "..",
// also percent-encoded) or an encoded "/" or "\" is refused, not normalized: servers
// and git resolve those differently, so "http://host/alice/../bob/repo" must not be
// judged as one repository and fetched as another.
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443', ssh: '22', git: '9418' };
const UNRESERVED = /^[a-z0-9\-._~]$/;

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
    let authority = m[2] as string;
    const port = DEFAULT_PORTS[scheme];
    if (port && authority.endsWith(`:${port}`)) authority = authority.slice(0, -(port.length + 1));
    authority = authority.replace(/:$/, '');
    prefix = `${scheme}://${authority}`;
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
  path = path.replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
  return { url: `${prefix}${path}${tail}` };
}

/** True when two repository URLs name the same repository (both must be valid). */
export function sameRepoURL(a: string, b: string): boolean {
  const x = normalizeRepoURL(a);
  const y = normalizeRepoURL(b);
  return x.url !== undefined && x.url === y.url;
}

/** git's `url.<base>.insteadOf <prefix>` rules given through the environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n) */
export interface InsteadOf { base: string; prefix: string }

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
