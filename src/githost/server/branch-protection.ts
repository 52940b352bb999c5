// Branch protection rules with Gitea's API shape (modules/structs/repo_branch.go:
// CreateBranchProtectionOption, EditBranchProtectionOption, BranchProtection) and
// Gitea's rule matching (models/git/protected_branch*.go): a rule name without glob
// characters matches that branch case-insensitively; otherwise it is a glob with "/" as
// separator ("*" stays in a segment, "**" crosses). The first rule in priority order
// wins (priority ascending, plain names before globs, older rules first).
// What githost enforces at push time (push-check.ts): deletion, force push
// (enable_force_push + allowlist), require_signed_commits, and who may push
// (enable_push + push whitelist). The other fields (status checks, approvals, merge
// whitelist, file patterns) are stored and returned, as githost has no pull requests.
import { E } from '../../base/errors/index.js';
import type { GithostDb, ProtectedBranchRow, UserRow } from './db.js';
import { HttpError } from './http-io.js';

/** The stored fields of a rule (Gitea's names). */
export interface BranchProtectionRule {
  enable_push: boolean;
  enable_push_whitelist: boolean;
  push_whitelist_usernames: string[];
  push_whitelist_teams: string[];
  push_whitelist_deploy_keys: boolean;
  enable_force_push: boolean;
  enable_force_push_allowlist: boolean;
  force_push_allowlist_usernames: string[];
  force_push_allowlist_teams: string[];
  force_push_allowlist_deploy_keys: boolean;
  enable_merge_whitelist: boolean;
  merge_whitelist_usernames: string[];
  merge_whitelist_teams: string[];
  enable_status_check: boolean;
  status_check_contexts: string[];
  required_approvals: number;
  enable_approvals_whitelist: boolean;
  approvals_whitelist_username: string[];
  approvals_whitelist_teams: string[];
  block_on_rejected_reviews: boolean;
  block_on_official_review_requests: boolean;
  block_on_outdated_branch: boolean;
  dismiss_stale_approvals: boolean;
  ignore_stale_approvals: boolean;
  require_signed_commits: boolean;
  protected_file_patterns: string;
  unprotected_file_patterns: string;
  block_admin_merge_override: boolean;
}

const BOOLS = [
  'enable_push',
  'enable_push_whitelist',
  'push_whitelist_deploy_keys',
  'enable_force_push',
  'enable_force_push_allowlist',
  'force_push_allowlist_deploy_keys',
  'enable_merge_whitelist',
  'enable_status_check',
  'enable_approvals_whitelist',
  'block_on_rejected_reviews',
  'block_on_official_review_requests',
  'block_on_outdated_branch',
  'dismiss_stale_approvals',
  'ignore_stale_approvals',
  'require_signed_commits',
  'block_admin_merge_override',
] as const;
const LISTS = [
  'push_whitelist_usernames',
  'push_whitelist_teams',
  'force_push_allowlist_usernames',
  'force_push_allowlist_teams',
  'merge_whitelist_usernames',
  'merge_whitelist_teams',
  'status_check_contexts',
  'approvals_whitelist_username',
  'approvals_whitelist_teams',
] as const;
const USER_LISTS = ['push_whitelist_usernames', 'force_push_allowlist_usernames', 'merge_whitelist_usernames', 'approvals_whitelist_username'] as const;
const STRINGS = ['protected_file_patterns', 'unprotected_file_patterns'] as const;

export const emptyRule = (): BranchProtectionRule =>
  ({
    ...Object.fromEntries(BOOLS.map((k) => [k, false])),
    ...Object.fromEntries(LISTS.map((k) => [k, []])),
    ...Object.fromEntries(STRINGS.map((k) => [k, ''])),
    required_approvals: 0,
  }) as unknown as BranchProtectionRule;

/** Gitea's glob.IsSpecialByte: a rule name with one of these is a glob. */
export const isRuleNameSpecial = (name: string): boolean => /[*?[\]{}\\]/.test(name);

const globCache = new Map<string, RegExp | null>();

/** gobwas/glob with separator "/" (as Gitea compiles rule names); an invalid glob matches its text literally. */
function globRegExp(pattern: string): RegExp | null {
  const hit = globCache.get(pattern);
  if (hit !== undefined) return hit;
  const esc = (c: string) => c.replace(/[.+?^${}()|[\]\\/*-]/g, '\\$&');
  let re = '';
  let depth = 0;
  let ok = true;
  for (let i = 0; i < pattern.length && ok; i++) {
    const c = pattern[i] as string;
    if (c === '\\') {
      const n = pattern[++i];
      if (n === undefined) ok = false;
      else re += esc(n);
    } else if (c === '*') {
      if (pattern[i + 1] === '*') {
        re += '[^]*';
        i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) ok = false;
      else {
        let body = pattern.slice(i + 1, end);
        const neg = body.startsWith('!');
        if (neg) body = body.slice(1);
        re += `[${neg ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        i = end;
      }
    } else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) re += '|';
    else re += esc(c);
  }
  let out: RegExp | null = null;
  if (ok && depth === 0) {
    try {
      out = new RegExp(`^${re}$`);
    } catch {
      out = null;
    }
  }
  if (globCache.size > 1000) globCache.clear();
  globCache.set(pattern, out);
  return out;
}

export function ruleMatches(ruleName: string, branch: string): boolean {
  if (!isRuleNameSpecial(ruleName)) return ruleName.toLowerCase() === branch.toLowerCase();
  const re = globRegExp(ruleName);
  return re ? re.test(branch) : ruleName === branch;
}

export interface LoadedRule {
  row: ProtectedBranchRow;
  rule: BranchProtectionRule;
}

export function loadRule(row: ProtectedBranchRow): LoadedRule {
  let parsed: Partial<BranchProtectionRule> = {};
  try {
    parsed = JSON.parse(row.rule) as Partial<BranchProtectionRule>;
  } catch {
    /* a broken row protects with the defaults: no push */
  }
  return { row, rule: { ...emptyRule(), ...parsed } };
}

/** The repository's rules in Gitea's order. */
export function sortedRules(db: GithostDb, repoId: number): LoadedRule[] {
  return db
    .protectionsOf(repoId)
    .map(loadRule)
    .sort(
      (a, b) =>
        a.row.priority - b.row.priority ||
        Number(isRuleNameSpecial(a.row.rule_name)) - Number(isRuleNameSpecial(b.row.rule_name)) ||
        a.row.created_unix - b.row.created_unix ||
        a.row.id - b.row.id,
    );
}

export function firstMatchingRule(rules: readonly LoadedRule[], branch: string): LoadedRule | undefined {
  return rules.find((r) => ruleMatches(r.row.rule_name, branch));
}

/** Gitea's derived flags: a whitelist is on only when pushing is, and so on. */
function normalize(r: BranchProtectionRule): BranchProtectionRule {
  const out = { ...r };
  out.enable_push_whitelist = r.enable_push && r.enable_push_whitelist;
  out.push_whitelist_deploy_keys = out.enable_push_whitelist && r.push_whitelist_deploy_keys;
  out.enable_force_push = r.enable_push && r.enable_force_push;
  out.enable_force_push_allowlist = out.enable_force_push && r.enable_force_push_allowlist;
  out.force_push_allowlist_deploy_keys = out.enable_force_push_allowlist && r.force_push_allowlist_deploy_keys;
  out.required_approvals = Math.max(0, r.required_approvals);
  return out;
}

/**
 * Apply a Create or Edit option body to `base`: only fields present are taken (Edit's
 * pointer semantics); types are checked (422 as Gitea's binding); user names must exist.
 */
export function applyOptions(db: GithostDb, base: BranchProtectionRule, body: Record<string, unknown>): BranchProtectionRule {
  const r = { ...base };
  const bad = (k: string, want: string) => new HttpError(E.githostFieldInvalid, `[${k}]: must be ${want}`);
  for (const k of BOOLS) {
    if (body[k] === undefined || body[k] === null) continue;
    if (typeof body[k] !== 'boolean') throw bad(k, 'a boolean');
    r[k] = body[k];
  }
  for (const k of LISTS) {
    if (body[k] === undefined || body[k] === null) continue;
    const v = body[k];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(k, 'a list of strings');
    r[k] = [...new Set(v as string[])];
  }
  for (const k of STRINGS) {
    if (body[k] === undefined || body[k] === null) continue;
    if (typeof body[k] !== 'string') throw bad(k, 'a string');
    r[k] = body[k];
  }
  if (body['required_approvals'] !== undefined && body['required_approvals'] !== null) {
    if (!Number.isSafeInteger(body['required_approvals'])) throw bad('required_approvals', 'an integer');
    r.required_approvals = body['required_approvals'] as number;
  }
  for (const k of USER_LISTS) {
    r[k] = r[k].map((name) => {
      const u = db.userByName(name);
      if (!u) throw new HttpError(E.githostUserUnknown, `user does not exist [uid: 0, name: ${name}]`);
      return u.name;
    });
  }
  if (r.push_whitelist_teams.length || r.force_push_allowlist_teams.length || r.merge_whitelist_teams.length || r.approvals_whitelist_teams.length) {
    // githost has no organizations: Gitea ignores team names for a user-owned repository
    r.push_whitelist_teams = [];
    r.force_push_allowlist_teams = [];
    r.merge_whitelist_teams = [];
    r.approvals_whitelist_teams = [];
  }
  return normalize(r);
}

const iso = (unix: number): string => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Gitea's BranchProtection JSON (convert.ToBranchProtection). */
export function toBranchProtection(l: LoadedRule): Record<string, unknown> {
  return {
    branch_name: isRuleNameSpecial(l.row.rule_name) ? '' : l.row.rule_name,
    rule_name: l.row.rule_name,
    priority: l.row.priority,
    ...l.rule,
    created_at: iso(l.row.created_unix),
    updated_at: iso(l.row.updated_unix),
  };
}

/** Gitea's CanUserPush / CanUserForcePush for a user who has write access. */
export function canUserPush(rule: BranchProtectionRule, user: UserRow, force: boolean): boolean {
  if (force) {
    if (!rule.enable_force_push) return false;
    if (!rule.enable_force_push_allowlist) return canUserPush(rule, user, false);
    return rule.force_push_allowlist_usernames.some((n) => n.toLowerCase() === user.lower_name);
  }
  if (!rule.enable_push) return false;
  return !rule.enable_push_whitelist || rule.push_whitelist_usernames.some((n) => n.toLowerCase() === user.lower_name);
}
