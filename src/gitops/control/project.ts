// A project's rules: allowed source repositories, destinations and resource kinds
// ('*' and other glob patterns), and the keys that must have signed the revision.
import { normalizeKeyID } from '../../platform/signatures/index.js';
import type { AppProject, GroupKind } from './types.js';

const globCache = new Map<string, RegExp>();

/** Glob match where '*' matches any run of characters (as Argo CD matches repos and destinations). */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  let re = globCache.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    globCache.set(pattern, re);
  }
  return re.test(value);
}

const normRepo = (u: string): string => u.trim().replace(/\/+$/, '').replace(/\.git$/, '').toLowerCase();

export function sourceRepoAllowed(project: AppProject, repoURL: string): boolean {
  const repo = normRepo(repoURL);
  return (project.spec?.sourceRepos ?? []).some((p) => p === '*' || globMatch(normRepo(p), repo));
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

export const enforcesSignatures = (project: AppProject): boolean => (project.spec?.signatureKeys ?? []).length > 0;
