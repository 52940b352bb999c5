// A project's rules: allowed source repositories, destinations and resource kinds
// (glob patterns), and the keys that must have signed the revision (source-integrity.ts
// says which rules apply to which repository).
import { globMatch } from '../../base/glob/index.js';
import { normalizeKeyID, type SshSignerRule } from '../../platform/signatures/index.js';
import { normalizeRepoURL } from './repo-url.js';
import type { AppProject, GroupKind } from './types.js';

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
  return (project.spec?.destinations ?? []).some((d) => globMatch(d.server ?? '*', server) && globMatch(d.namespace ?? '*', namespace));
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
    try {
      ids.push(normalizeKeyID(String(k?.keyID ?? '')));
    } catch {
      invalid.push(String(k?.keyID ?? ''));
    }
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
