// Gitea's access token scopes. "all" (or write:X) covers read:X. A token created
// without scopes gets "all", as tokens did before Gitea 1.19 (the GitOps setup flow creates
// one with only a name and then uses it to create users).
export const SCOPE_CATEGORIES = ['activitypub', 'admin', 'issue', 'misc', 'notification', 'organization', 'package', 'repository', 'user'] as const;
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];

const KNOWN = new Set<string>(['all', 'public-only', ...SCOPE_CATEGORIES.flatMap((c) => [`read:${c}`, `write:${c}`])]);

/** Normalise a scopes list; returns undefined when one is unknown. */
export function normalizeScopes(input: readonly string[]): string[] | undefined {
  const out = new Set<string>();
  for (const entry of input) {
    for (const raw of entry.split(',')) {
      const s = raw.trim();
      if (!s) continue;
      if (!KNOWN.has(s)) return undefined;
      out.add(s);
    }
  }
  if (out.size === 0) out.add('all');
  return [...out].sort();
}

export function scopeAllows(scopes: readonly string[], level: 'read' | 'write', category: ScopeCategory): boolean {
  if (scopes.includes('all')) return true;
  if (scopes.includes(`write:${category}`)) return true;
  return level === 'read' && scopes.includes(`read:${category}`);
}

/**
 * What a token may do over git HTTP, as Gitea checks it: a read (clone, fetch) needs
 * read:repository, a push write:repository; a public-only token reaches public
 * repositories only. Passwords carry "all". Returns why not, or undefined.
 */
export function gitScopeRefusal(scopes: readonly string[], push: boolean, repoPrivate: boolean): string | undefined {
  const level = push ? 'write' : 'read';
  if (!scopeAllows(scopes, level, 'repository')) return `the token has no ${level}:repository scope (token scope=${scopes.join(',')})`;
  if (repoPrivate && scopes.includes('public-only')) return 'the token is limited to public repositories (public-only)';
  return undefined;
}
