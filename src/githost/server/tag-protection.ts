// Tag protection with Gitea's API shape (modules/structs/repo_tag.go: TagProtection,
// CreateTagProtectionOption, EditTagProtectionOption) and Gitea's matching
// (models/git/protected_tag.go): a name pattern is a regular expression when it is
// enclosed in "/", otherwise a glob without separator; a tag that matches a rule may be
// created, moved or deleted only by a user a matching rule lists (an empty list: nobody).
// Enforced at push time by push-check.ts ("Tag T is protected"). Teams are stored and
// returned; githost has no teams, so a team entry allows nobody.
import { E } from '../../base/errors/index.js';
import { compileGlob } from '../../base/glob/index.js';
import type { GithostDb, ProtectedTagRow, UserRow } from './db.js';
import { HttpError } from './http-io.js';

const iso = (unix: number): string => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The rule's matcher, or an HttpError naming the pattern when it does not compile (as Gitea refuses it). */
export function tagMatcher(pattern: string): RegExp {
  if (pattern.length > 2 && pattern.startsWith('/') && pattern.endsWith('/')) {
    try {
      return new RegExp(pattern.slice(1, -1));
    } catch (err) {
      throw new HttpError(E.githostFieldInvalid, `name_pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(err as Error).message}`);
    }
  }
  const re = compileGlob(pattern, '');
  if (!re)
    throw new HttpError(E.githostFieldInvalid, `name_pattern ${JSON.stringify(pattern)} is not a valid glob (an unclosed "[" or "{", or a trailing "\\")`);
  return re;
}

export function usernamesOf(row: ProtectedTagRow): string[] {
  try {
    const v = JSON.parse(row.allowlist_usernames) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

export function toTagProtection(row: ProtectedTagRow): Record<string, unknown> {
  return {
    id: row.id,
    name_pattern: row.name_pattern,
    whitelist_usernames: usernamesOf(row),
    whitelist_teams: [],
    created_at: iso(row.created_unix),
    updated_at: iso(row.updated_unix),
  };
}

/**
 * Gitea's IsUserAllowedToControlTag: allowed when no rule matches the tag, or when one of the
 * matching rules lists the user. A stored pattern that no longer compiles protects every tag.
 */
export function mayControlTag(db: GithostDb, repoId: number, tag: string, user: UserRow): boolean {
  let allowed = true;
  for (const row of db.tagProtectionsOf(repoId)) {
    let hit: boolean;
    try {
      hit = tagMatcher(row.name_pattern).test(tag);
    } catch {
      hit = true;
    }
    if (!hit) continue;
    allowed = usernamesOf(row).some((n) => n.toLowerCase() === user.lower_name);
    if (allowed) break;
  }
  return allowed;
}
