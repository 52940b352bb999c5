// Rows to Gitea's API objects (User, Repository, AccessToken, GPGKey), with the
// fields Gitea hides from callers who are neither the user nor an admin.
import type { GpgKeyRow, PublicKeyRow, RepoRow, TokenRow, UserRow } from './db.js';

export interface Links {
  /** base URL without a trailing slash, e.g. http://127.0.0.1:3000 */
  base: string;
  /** host part of base, for placeholder e-mails */
  domain: string;
}

const iso = (unix: number): string => new Date(unix * 1000).toISOString().replace(/\.000Z$/, 'Z');

export function toUser(u: UserRow, doer: UserRow | undefined, links: Links): Record<string, unknown> {
  const signed = doer !== undefined;
  const authed = doer !== undefined && (doer.is_admin === 1 || doer.id === u.id);
  return {
    id: u.id,
    login: u.name,
    login_name: authed ? u.login_name : '',
    source_id: 0,
    full_name: u.full_name,
    email: signed ? u.email : `${u.lower_name}@noreply.${links.domain}`,
    avatar_url: `${links.base}/avatars/${u.lower_name}`,
    html_url: `${links.base}/${u.name}`,
    language: '',
    is_admin: authed ? u.is_admin === 1 : false,
    last_login: authed && u.last_login_unix ? iso(u.last_login_unix) : '1970-01-01T00:00:00Z',
    created: iso(u.created_unix),
    restricted: u.restricted === 1,
    active: authed ? u.is_active === 1 : false,
    prohibit_login: authed ? u.prohibit_login === 1 : false,
    location: '',
    website: '',
    description: '',
    visibility: u.visibility,
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
    username: u.name,
  };
}

export interface RepoExtras {
  empty: boolean;
  /** number of branches (Gitea's branch_count) */
  branchCount: number;
  permissions: { admin: boolean; push: boolean; pull: boolean };
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * Gitea 1.26's Repository object, key for key (what the Gitea Go SDK's Repository
 * reads). githost hosts code only: the issue, wiki, pull-request, project, release,
 * package and action units are reported off, with Gitea's defaults for their
 * settings; it has no forks, so `parent` is left out as Gitea leaves it out.
 */
export function toRepo(r: RepoRow, owner: UserRow, doer: UserRow | undefined, extras: RepoExtras, links: Links): Record<string, unknown> {
  const full = `${owner.name}/${r.name}`;
  return {
    id: r.id,
    owner: toUser(owner, doer, links),
    name: r.name,
    full_name: full,
    description: r.description,
    empty: extras.empty,
    private: r.private === 1,
    fork: false,
    template: false,
    mirror: r.mirror === 1,
    size: 0,
    language: '',
    languages_url: `${links.base}/api/v1/repos/${full}/languages`,
    html_url: `${links.base}/${full}`,
    url: `${links.base}/api/v1/repos/${full}`,
    link: '',
    ssh_url: '',
    clone_url: `${links.base}/${full}.git`,
    original_url: r.original_url,
    website: '',
    stars_count: 0,
    forks_count: 0,
    watchers_count: 0,
    branch_count: extras.branchCount,
    open_issues_count: 0,
    open_pr_counter: 0,
    release_counter: 0,
    default_branch: r.default_branch,
    archived: false,
    created_at: iso(r.created_unix),
    updated_at: iso(r.updated_unix),
    archived_at: '1970-01-01T00:00:00Z',
    permissions: extras.permissions,
    has_code: true,
    has_issues: false,
    has_wiki: false,
    has_pull_requests: false,
    has_projects: false,
    projects_mode: 'all',
    has_releases: false,
    has_packages: false,
    has_actions: false,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: false,
    allow_rebase: false,
    allow_rebase_explicit: false,
    allow_squash_merge: false,
    allow_fast_forward_only_merge: false,
    allow_rebase_update: false,
    allow_manual_merge: true,
    autodetect_manual_merge: false,
    default_delete_branch_after_merge: false,
    default_merge_style: 'merge',
    default_allow_maintainer_edit: false,
    avatar_url: '',
    internal: false,
    mirror_interval: r.mirror === 1 ? '8h0m0s' : '',
    object_format_name: 'sha1',
    mirror_updated: ZERO_TIME,
    topics: [],
    licenses: [],
  };
}

/** Gitea's AccessToken: sha1 (the token text) only in the answer that created it. */
export function toAccessToken(t: TokenRow, sha1 = ''): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    sha1,
    token_last_eight: t.token_last_eight,
    scopes: t.scopes.split(','),
    created_at: iso(t.created_unix),
    last_used_at: iso(t.updated_unix),
  };
}

/** Gitea's PublicKey (convert.ToPublicKey; owner and key_type only for the owner or a site admin). */
export function toPublicKey(k: PublicKeyRow, links: Links, owner?: Record<string, unknown>): Record<string, unknown> {
  return {
    id: k.id,
    key: k.content,
    url: `${links.base}/api/v1/user/keys/${k.id}`,
    title: k.name,
    fingerprint: k.fingerprint,
    created_at: iso(k.created_unix),
    last_used_at: iso(k.updated_unix),
    ...(owner ? { user: owner, key_type: 'user' } : {}),
  };
}

export function toGpgKey(k: GpgKeyRow, subkeys: GpgKeyRow[]): Record<string, unknown> {
  return {
    id: k.id,
    primary_key_id: k.primary_key_id,
    key_id: k.key_id,
    public_key: k.content,
    emails: JSON.parse(k.emails) as { email: string; verified: boolean }[],
    subkeys: subkeys.map((s) => toGpgKey(s, [])),
    can_sign: k.can_sign === 1,
    can_encrypt_comms: k.can_encrypt_comms === 1,
    can_encrypt_storage: k.can_encrypt_storage === 1,
    can_certify: k.can_certify === 1,
    verified: k.verified === 1,
    created_at: iso(k.created_unix),
    expires_at: k.expired_unix ? iso(k.expired_unix) : ZERO_TIME,
  };
}
