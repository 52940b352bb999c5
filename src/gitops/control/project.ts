// A project's rules: allowed source repositories, destinations and resource kinds
// (glob patterns), and the keys that must have signed the revision (source-integrity.ts
// says which rules apply to which repository).
import { normalizeKeyID, type SshSignerRule } from '../../platform/signatures/index.js';
import { normalizeRepoURL } from './repo-url.js';
import type { AppProject, GroupKind } from './types.js';

const globCache = new Map<string, RegExp | null>();

const reEscape = (c: string): string => c.replace(/[.+?^${}()|[\]\\/*-]/g, '\\$&');

/**
 * A glob as Argo CD compiles it (gobwas/glob): "*" any run of characters but the
 * separator, "**" any run including it, "?" one character but the separator,
 * "[abc]" / "[!abc]" / "[a-z]" a class, "{a,b}" alternatives, "\x" a literal x.
 * Without a separator "*" and "**" are the same. An invalid pattern matches nothing.
 */
function compileGlob(pattern: string, separator: string): RegExp | null {
  const notSep = separator ? `[^${reEscape(separator)}]` : '[^]';
  let re = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const next = pattern[++i];
      if (next === undefined) return null;
      re += reEscape(next);
    } else if (c === '*') {
      if (pattern[i + 1] === '*') {
        re += '[^]*';
        i++;
      } else re += `${notSep}*`;
    } else if (c === '?') re += notSep;
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) return null;
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) re += '|';
    else re += reEscape(c);
  }
  if (depth !== 0) return null;
  try {
    return new RegExp(`^${re}$`);
  } catch {
    return null;
  }
}

/**
 * Glob match. Without `separator` "*" matches any run of characters (destinations,
 * kinds); with '/' it stays inside one path segment, as Argo CD matches sourceRepos.
 */
export function globMatch(pattern: string, value: string, separator = ''): boolean {
  if (pattern === '*') return true;
  const key = `${separator}\0${pattern}`;
  let re = globCache.get(key);
  if (re === undefined) {
    if (globCache.size > 10_000) globCache.clear();
    re = compileGlob(pattern, separator);
    globCache.set(key, re);
  }
  return re !== null && re.test(value);
}

/**
 * Argo CD's IsSourcePermitted: both sides normalized (repo-url.ts), "*" stays inside a
 * path segment ("**" crosses), a "!pattern" refuses what it matches. A repoURL that
 * cannot be normalized (dot segments, encoded slashes) is never permitted.
 */
export function sourceRepoAllowed(project: AppProject, repoURL: string): boolean {
  const repo = normalizeRepoURL(repoURL).url;
  if (repo === undefined) return false;
  let matched = false;
  for (const raw of project.spec?.sourceRepos ?? []) {
    const deny = raw.startsWith('!');
    const body = deny ? raw.slice(1) : raw;
    const pattern = body.trim() === '*' ? '*' : normalizeRepoURL(body).url;
    if (pattern === undefined) continue;
    const hit = globMatch(pattern, repo, '/');
    if (deny && hit) return false;
    // as in Argo CD, a deny pattern that does not match counts as a match
    if (deny || hit) matched = true;
  }
  return matched;
}

export function destinationAllowed(project: AppProject, server: string, namespace: string): boolean {
  return (project.spec?.destinations ?? []).some((d) =>
    globMatch(d.server ?? '*', server) && globMatch(d.namespace ?? '*', namespace));
}

function kindMatches(list: GroupKind[], group: string, kind: string): boolean {
  return list.some((gk) => globMatch(gk.group ?? '', group) && globMatch(gk.kind ?? '', kind));
}

/**
 * Namespaced kinds are allowed when namespaceResourceWhitelist is empty (all) or
 * matches; cluster-scoped kinds only when clusterResourceWhitelist matches (Argo CD's
 * default: no cluster-scoped resources unless whitelisted).
 */
export function resourceAllowed(project: AppProject, group: string, kind: string, namespaced: boolean): boolean {
  if (namespaced) {
    const list = project.spec?.namespaceResourceWhitelist ?? [];
    return list.length === 0 || kindMatches(list, group, kind);
  }
  return kindMatches(project.spec?.clusterResourceWhitelist ?? [], group, kind);
}

/** The project's signature keys as canonical 16-hex IDs (invalid entries are dropped and returned apart). */
export function signatureKeyIDs(project: AppProject): { ids: string[]; invalid: string[] } {
  const ids: string[] = [];
  const invalid: string[] = [];
  for (const k of project.spec?.signatureKeys ?? []) {
    try { ids.push(normalizeKeyID(String(k?.keyID ?? ''))); } catch { invalid.push(String(k?.keyID ?? '')); }
  }
  return { ids, invalid };
}

/** The project's SSH signer rules (strait extension spec.sshSigners); entries with neither field or a bad fingerprint are returned apart. */
export function sshSignerRules(project: AppProject): { rules: SshSignerRule[]; invalid: string[] } {
  const rules: SshSignerRule[] = [];
  const invalid: string[] = [];
  for (const s of project.spec?.sshSigners ?? []) {
    const fingerprint = typeof s?.fingerprint === 'string' && s.fingerprint !== '' ? s.fingerprint : undefined;
    const principal = typeof s?.principal === 'string' && s.principal !== '' ? s.principal : undefined;
    if ((!fingerprint && !principal) || (fingerprint && !/^SHA256:[A-Za-z0-9+/]{43}$/.test(fingerprint))) invalid.push(JSON.stringify(s));
    else rules.push({ ...(fingerprint ? { fingerprint } : {}), ...(principal ? { principal } : {}) });
  }
  return { rules, invalid };
}

/** True when the project enforces signatures on some Git source: legacy signatureKeys or sshSigners, or a source integrity policy in mode head or strict. */
export function enforcesSignatures(project: AppProject): boolean {
  const si = project.spec?.sourceIntegrity;
  if ((project.spec?.sshSigners ?? []).length > 0) return true;
  if (si) return (si.git?.policies ?? []).some((p) => p?.gpg?.mode === 'head' || p?.gpg?.mode === 'strict');
  return (project.spec?.signatureKeys ?? []).length > 0;
}
