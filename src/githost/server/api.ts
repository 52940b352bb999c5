// The Gitea-compatible /api/v1: routes, authentication and authorization per route,
// Gitea's status codes and error body {"message", "url"}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { E, definitionOf, isStraitError } from '../../base/errors/index.js';
import type { Logger } from '../../base/log/index.js';
import type { Authenticator, Doer } from './auth.js';
import { toAccessToken, toGpgKey, toPublicKey, toRepo, toUser, type Links } from './convert.js';
import { applyOptions, emptyRule, loadRule, sortedRules, toBranchProtection } from './branch-protection.js';
import { parseSshPublicKeyLine } from '../../platform/signatures/index.js';
import type { ProtectedTagRow, PublicKeyRow, RepoRow, UserRow } from './db.js';
import { pathSegments } from '../../platform/http/index.js';
import { HttpError, Fields, readJsonBody, sendError, sendJson } from './http-io.js';
import { isValidRepoName, isValidUsername } from './names.js';
import { checkRefName } from './ref-names.js';
import { tagMatcher, toTagProtection, usernamesOf } from './tag-protection.js';
import { normalizeScopes, scopeAllows, type ScopeCategory } from './scopes.js';
import type { GithostService } from './service.js';
import { createToken, createUser } from './users.js';

export const GITEA_COMPAT_VERSION = '1.21.11';

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  /** the request path (under /api/v1) and its query */
  path: string;
  query: URLSearchParams;
  params: string[];
  doer: Doer | undefined;
  authScheme: string;
}

type Handler = (ctx: Ctx) => Promise<void>;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

const notFound = (what: string) => new HttpError(E.githostNotFound, `The target couldn't be found: ${what}`);

export class GiteaApi {
  private readonly routes: Route[] = [];

  constructor(
    private readonly svc: GithostService,
    private readonly auth: Authenticator,
    private readonly links: () => Links,
    private readonly log: Logger,
  ) {
    const r = (method: string, path: string, handler: Handler) => this.routes.push({ method, parts: path.split('/').filter(Boolean), handler });
    r('GET', '/version', async (c) => sendJson(c.res, 200, { version: `${GITEA_COMPAT_VERSION}+strait` }));
    r('POST', '/users/:username/tokens', (c) => this.createToken(c));
    r('GET', '/users/:username/tokens', (c) => this.listTokens(c));
    r('DELETE', '/users/:username/tokens/:id', (c) => this.deleteToken(c));
    r('POST', '/admin/users', (c) => this.adminCreateUser(c));
    r('GET', '/user', (c) => this.currentUser(c));
    r('GET', '/users/:username', (c) => this.getUser(c));
    r('GET', '/users/:username/gpg_keys', (c) => this.listUserGpgKeys(c));
    r('GET', '/user/gpg_keys', (c) => this.listOwnGpgKeys(c));
    r('POST', '/user/gpg_keys', (c) => this.addGpgKey(c));
    r('GET', '/user/gpg_keys/:id', (c) => this.getOwnGpgKey(c));
    r('DELETE', '/user/gpg_keys/:id', (c) => this.deleteOwnGpgKey(c));
    r('GET', '/users/:username/keys', (c) => this.listUserKeys(c));
    r('GET', '/user/keys', (c) => this.listOwnKeys(c));
    r('POST', '/user/keys', (c) => this.addKey(c));
    r('GET', '/user/keys/:id', (c) => this.getKey(c));
    r('DELETE', '/user/keys/:id', (c) => this.deleteKey(c));
    r('GET', '/user/repos', (c) => this.listMyRepos(c));
    r('POST', '/user/repos', (c) => this.createRepo(c));
    r('GET', '/users/:username/repos', (c) => this.listUserRepos(c));
    r('GET', '/repos/search', (c) => this.searchRepos(c));
    r('POST', '/repos/migrate', (c) => this.migrate(c));
    r('GET', '/repos/:owner/:repo', (c) => this.getRepo(c));
    r('PUT', '/repos/:owner/:repo/collaborators/:collaborator', (c) => this.addCollaborator(c));
    r('GET', '/repos/:owner/:repo/git/commits/:sha', (c) => this.getCommit(c));
    r('GET', '/repos/:owner/:repo/branch_protections', (c) => this.listProtections(c));
    r('POST', '/repos/:owner/:repo/branch_protections', (c) => this.createProtection(c));
    r('GET', '/repos/:owner/:repo/branch_protections/*name', (c) => this.getProtection(c));
    r('PATCH', '/repos/:owner/:repo/branch_protections/*name', (c) => this.editProtection(c));
    r('DELETE', '/repos/:owner/:repo/branch_protections/*name', (c) => this.deleteProtection(c));
    r('GET', '/repos/:owner/:repo/tag_protections', (c) => this.listTagProtections(c));
    r('POST', '/repos/:owner/:repo/tag_protections', (c) => this.createTagProtection(c));
    r('GET', '/repos/:owner/:repo/tag_protections/:id', (c) => this.getTagProtection(c));
    r('PATCH', '/repos/:owner/:repo/tag_protections/:id', (c) => this.editTagProtection(c));
    r('DELETE', '/repos/:owner/:repo/tag_protections/:id', (c) => this.deleteTagProtection(c));
  }

  get swaggerURL(): string {
    return `${this.links().base}/api/swagger`;
  }

  /** Handle a request whose path starts with /api/v1. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    try {
      const segs = pathSegments(path.slice('/api/v1'.length));
      let pathMatched = false;
      for (const route of this.routes) {
        const params = match(route.parts, segs);
        if (!params) continue;
        pathMatched = true;
        if (route.method !== req.method) continue;
        const header = req.headers['authorization'] ?? '';
        const doer = await this.auth.identify(req.headers);
        const ctx: Ctx = {
          req,
          res,
          path,
          query: new URL(req.url ?? '/', 'http://localhost').searchParams,
          params,
          doer,
          authScheme: header.split(' ')[0]?.toLowerCase() ?? '',
        };
        if (doer?.via === 'password' && doer.user.must_change_password === 1 && !route.parts.includes('tokens')) {
          throw new HttpError(E.githostDenied, 'You must change your password. Change it at: /user/settings/account');
        }
        await route.handler(ctx);
        return;
      }
      if (pathMatched) throw new HttpError(E.httpMethodNotAllowed, `method ${req.method ?? ''} is not allowed on ${path}`);
      throw new HttpError(E.githostNotFound, `The target couldn't be found: no API route ${req.method ?? ''} ${path}`);
    } catch (err) {
      req.resume();
      if (isStraitError(err)) {
        // Gitea's status where it differs from the kind's (422 for most refused input)
        const status = definitionOf(err.code)?.giteaStatus ?? err.httpStatus;
        const challenge = status === 401 ? { 'WWW-Authenticate': 'Basic realm="strait githost"' } : undefined;
        sendError(req, res, status, err.message, this.swaggerURL, challenge, err.code);
      } else {
        this.log.error({ err }, 'githost API handler failed');
        sendError(req, res, 500, 'internal server error; see the githost log', this.swaggerURL, undefined, E.internal.code);
      }
    }
  }

  // --- helpers ---------------------------------------------------------------------

  private requireDoer(c: Ctx): Doer {
    if (!c.doer) throw new HttpError(E.githostUnauthenticated, 'token is required');
    return c.doer;
  }

  private requireScope(doer: Doer, level: 'read' | 'write', category: ScopeCategory): void {
    if (doer.via === 'token' && !scopeAllows(doer.scopes, level, category)) {
      throw new HttpError(
        E.githostDenied,
        `token does not have at least one of required scope(s): [${level}:${category}], token scope=${doer.scopes.join(',')}`,
      );
    }
  }

  private requireAdmin(doer: Doer): void {
    if (doer.user.is_admin !== 1) throw new HttpError(E.githostDenied, 'user should be the site admin');
  }

  private userParam(name: string | undefined, doer: Doer | undefined): UserRow {
    const u = name && isValidUsername(name) ? this.svc.db.userByName(name) : undefined;
    if (!u) throw notFound(`user redirect does not exist [name: ${name ?? ''}]`);
    if (u.visibility === 'private' && !(doer && (doer.user.id === u.id || doer.user.is_admin === 1)))
      throw notFound(`user redirect does not exist [name: ${name ?? ''}]`);
    if (u.visibility === 'limited' && !doer) throw notFound(`user redirect does not exist [name: ${name ?? ''}]`);
    return u;
  }

  private repoParam(c: Ctx): { owner: UserRow; repo: RepoRow } {
    const [ownerName, repoName] = c.params;
    const owner = ownerName && isValidUsername(ownerName) ? this.svc.db.userByName(ownerName) : undefined;
    const repo = owner && repoName && isValidRepoName(repoName) ? this.svc.db.repoByName(owner.id, repoName) : undefined;
    if (!owner || !repo || !this.svc.permission(repo, c.doer?.user).pull) throw notFound(`repository does not exist [${ownerName ?? ''}/${repoName ?? ''}]`);
    // Gitea's checkTokenPublicOnly: a public-only token reaches public repositories only,
    // through the API as over git HTTP
    if (repo.private === 1 && c.doer?.via === 'token' && c.doer.scopes.includes('public-only'))
      throw new HttpError(E.githostDenied, 'token scope is limited to public repos');
    return { owner, repo };
  }

  private async repoJson(owner: UserRow, repo: RepoRow, doer: UserRow | undefined): Promise<Record<string, unknown>> {
    const refs = await this.svc.refState(owner, repo);
    return toRepo(repo, owner, doer, { ...refs, permissions: this.svc.permission(repo, doer) }, this.links());
  }

  /** Whether `doer` may see user `u` at all (Gitea's user visibility). */
  private canSeeUser(u: UserRow, doer: UserRow | undefined): boolean {
    if (u.visibility === 'private') return doer !== undefined && (doer.id === u.id || doer.is_admin === 1);
    if (u.visibility === 'limited') return doer !== undefined;
    return true;
  }

  /**
   * Gitea's paged list answer: page (from 1) and limit (default 30, at most 50) from
   * the query, X-Total-Count and Link (next, last, first, prev) headers, then `body`
   * made from the page's rows.
   */
  private async sendPage<T>(c: Ctx, rows: T[], toJson: (page: T[]) => Promise<unknown[]>, wrap: (items: unknown[]) => unknown = (x) => x): Promise<void> {
    const { page, limit } = listOptions(c.query);
    const items = await toJson(rows.slice((page - 1) * limit, page * limit));
    const headers: Record<string, string> = { 'X-Total-Count': String(rows.length) };
    const link = linkHeader(`${this.links().base}${c.path}`, c.query, rows.length, limit, page);
    if (link) headers['Link'] = link;
    headers['Access-Control-Expose-Headers'] = link ? 'Link, X-Total-Count' : 'X-Total-Count';
    for (const [k, v] of Object.entries(headers)) c.res.setHeader(k, v);
    sendJson(c.res, 200, wrap(items));
  }

  private reposJson(doer: UserRow | undefined): (page: { repo: RepoRow; owner: UserRow }[]) => Promise<unknown[]> {
    return (page) => Promise.all(page.map(({ repo, owner }) => this.repoJson(owner, repo, doer)));
  }

  private body(c: Ctx): Promise<Record<string, unknown>> {
    return readJsonBody(c.req, this.svc.settings.maxBodyBytes, this.svc.settings.bodyTimeoutMs);
  }

  // --- tokens ------------------------------------------------------------------------

  private basicOnly(c: Ctx): Doer {
    if (c.authScheme !== 'basic' || !c.doer)
      throw new HttpError(E.githostUnauthenticated, "auth required: this endpoint takes HTTP basic auth with the user's name and password");
    if (c.doer.via !== 'password') throw new HttpError(E.githostUnauthenticated, 'auth method not allowed: use the password, not a token');
    return c.doer;
  }

  private selfOrAdmin(doer: Doer, name: string | undefined): UserRow {
    const target = this.userParam(name, doer);
    if (doer.user.id !== target.id && doer.user.is_admin !== 1)
      throw new HttpError(E.githostDenied, 'doer should be the site admin or be same as the contextUser');
    return target;
  }

  private async createToken(c: Ctx): Promise<void> {
    const doer = this.basicOnly(c);
    const target = this.selfOrAdmin(doer, c.params[0]);
    const f = new Fields(await this.body(c));
    const name = f.string('name', 'Name', { required: true, max: 255 });
    const scopes = normalizeScopes(f.stringList('scopes', 'Scopes'));
    if (!scopes)
      throw new HttpError(
        E.githostRequestInvalid,
        `invalid access token scope provided; known scopes: all, read:user, write:user, read:repository, write:repository, read:admin, write:admin, ...`,
      );
    const made = createToken(this.svc.db, target.id, name, scopes);
    if (!made) throw new HttpError(E.githostTokenNameUsed, 'access token name has been used already');
    sendJson(c.res, 201, toAccessToken(made.row, made.token));
  }

  private async listTokens(c: Ctx): Promise<void> {
    const doer = this.basicOnly(c);
    const target = this.selfOrAdmin(doer, c.params[0]);
    sendJson(
      c.res,
      200,
      this.svc.db.tokensOf(target.id).map((t) => toAccessToken(t)),
    );
  }

  private async deleteToken(c: Ctx): Promise<void> {
    const doer = this.basicOnly(c);
    const target = this.selfOrAdmin(doer, c.params[0]);
    const id = Number(c.params[1]);
    const row = Number.isSafeInteger(id) ? undefined : this.svc.db.tokenByName(target.id, c.params[1] ?? '');
    if (!this.svc.db.deleteToken(target.id, row ? row.id : id)) throw notFound(`access token does not exist [id: ${c.params[1] ?? ''}]`);
    c.res.writeHead(204).end();
  }

  // --- users -------------------------------------------------------------------------

  private async adminCreateUser(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'admin');
    this.requireAdmin(doer);
    const body = await this.body(c);
    const f = new Fields(body);
    const username = f.string('username', 'Username', { required: true, max: 40 });
    const email = f.string('email', 'Email', { required: true, max: 254 });
    const password = f.string('password', 'Password', { max: 255 });
    const loginName = f.string('login_name', 'LoginName');
    const fullName = f.string('full_name', 'FullName', { max: 100 });
    const mustChange = f.bool('must_change_password', 'MustChangePassword', true);
    f.bool('send_notify', 'SendNotify');
    f.int('source_id', 'SourceID');
    const visibility = f.string('visibility', 'Visibility') || 'public';
    if (!['public', 'limited', 'private'].includes(visibility))
      throw new HttpError(E.githostFieldInvalid, `[Visibility]: must be public, limited or private, got ${JSON.stringify(visibility)}`);
    if (!password) throw new HttpError(E.githostRequestInvalid, 'password is required for a local user');
    const user = await createUser(this.svc.db, {
      username,
      email,
      password,
      loginName,
      fullName,
      mustChangePassword: mustChange,
      visibility: visibility as 'public' | 'limited' | 'private',
    });
    this.log.info({ user: user.name, by: doer.user.name }, 'created user');
    sendJson(c.res, 201, toUser(user, doer.user, this.links()));
  }

  private async currentUser(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'read', 'user');
    sendJson(c.res, 200, toUser(doer.user, doer.user, this.links()));
  }

  private async getUser(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'user');
    const u = this.userParam(c.params[0], c.doer);
    sendJson(c.res, 200, toUser(u, c.doer?.user, this.links()));
  }

  // --- GPG keys ----------------------------------------------------------------------

  private gpgList(u: UserRow): unknown[] {
    return this.svc.gpgKeys(u).map(({ key, subkeys }) => toGpgKey(key, subkeys));
  }

  private async listUserGpgKeys(c: Ctx): Promise<void> {
    // Gitea 1.26 lists a user's keys to signed-in callers only
    this.requireScope(this.requireDoer(c), 'read', 'user');
    sendJson(c.res, 200, this.gpgList(this.userParam(c.params[0], c.doer)));
  }

  private async listOwnGpgKeys(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'read', 'user');
    sendJson(c.res, 200, this.gpgList(doer.user));
  }

  private async addGpgKey(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'user');
    const f = new Fields(await this.body(c));
    const armored = f.string('armored_public_key', 'ArmoredKey', { required: true });
    f.string('armored_signature', 'Signature');
    const rows = await this.svc.addGpgKey(doer.user, armored);
    const [primary, ...subs] = rows;
    if (!primary) throw new HttpError(E.internal, 'no key was stored');
    this.log.info({ user: doer.user.name, keyID: primary.key_id }, 'added GPG key');
    sendJson(c.res, 201, toGpgKey(primary, subs));
  }

  /** GET /user/gpg_keys/{id}: one of the caller's keys (a primary key or a subkey) by its id. */
  private async getOwnGpgKey(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'read', 'user');
    const id = pathInt(c.params[0]);
    const key = id > 0 ? this.svc.db.gpgKeyOfUser(doer.user.id, id) : undefined;
    if (!key) throw new HttpError(E.githostNotFound, 'not found');
    sendJson(c.res, 200, toGpgKey(key, this.svc.db.gpgSubkeys(key.key_id)));
  }

  /** DELETE /user/gpg_keys/{id}: 204, also (as in Gitea) when the caller has no key with that id. */
  private async deleteOwnGpgKey(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'user');
    const id = pathInt(c.params[0]);
    const key = id > 0 ? this.svc.db.gpgKeyOfUser(doer.user.id, id) : undefined;
    if (key) {
      this.svc.db.deleteGpgKey(doer.user.id, key.key_id);
      this.log.info({ user: doer.user.name, keyID: key.key_id }, 'deleted GPG key');
    }
    c.res.writeHead(204).end();
  }

  // --- SSH keys (Gitea's /user/keys) -------------------------------------------------

  private keyJson(k: PublicKeyRow, doer: UserRow | undefined): Record<string, unknown> {
    const mine = doer !== undefined && (doer.id === k.owner_id || doer.is_admin === 1);
    const owner = mine ? this.svc.db.userById(k.owner_id) : undefined;
    return toPublicKey(k, this.links(), owner ? (toUser(owner, owner, this.links()) as Record<string, unknown>) : undefined);
  }

  private async sendKeys(c: Ctx, user: UserRow): Promise<void> {
    const fingerprint = c.query.get('fingerprint') ?? '';
    const rows = fingerprint
      ? [this.svc.db.publicKeyByFingerprint(fingerprint)].filter(
          (k): k is PublicKeyRow => k !== undefined && (c.params[0] === undefined || k.owner_id === user.id),
        )
      : this.svc.db.publicKeysOf(user.id);
    await this.sendPage(c, rows, async (page) => page.map((k) => this.keyJson(k, c.doer?.user)));
  }

  private async listOwnKeys(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'read', 'user');
    await this.sendKeys(c, doer.user);
  }

  private async listUserKeys(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'user');
    await this.sendKeys(c, this.userParam(c.params[0], c.doer));
  }

  /** POST /user/keys {title, key, read_only}: 201, 422 for bad or taken keys and titles (Gitea's texts). */
  private async addKey(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'user');
    const f = new Fields(await this.body(c));
    const title = f.string('title', 'Title', { required: true, max: 50 });
    const text = f.string('key', 'Key', { required: true });
    f.bool('read_only', 'ReadOnly');
    let parsed: ReturnType<typeof parseSshPublicKeyLine>;
    try {
      parsed = parseSshPublicKeyLine(text);
    } catch (err) {
      if (isStraitError(err)) throw new HttpError(E.githostFieldInvalid, `Invalid key content: ${err.message}`);
      throw err;
    }
    if (parsed.key.cert) throw new HttpError(E.githostFieldInvalid, 'Invalid key content: a certificate is not a user key; add the key it certifies');
    const row = this.svc.db.insertPublicKey({
      owner_id: doer.user.id,
      name: title,
      fingerprint: parsed.key.fingerprint,
      content: `${parsed.key.type} ${parsed.key.blob.toString('base64')}`,
    });
    if (row === 'fingerprint') throw new HttpError(E.githostKeyUsed, 'Key content has been used as non-deploy key');
    if (row === 'name') throw new HttpError(E.githostKeyUsed, 'Key title has been used');
    this.log.info({ user: doer.user.name, fingerprint: row.fingerprint }, 'added SSH key');
    sendJson(c.res, 201, this.keyJson(row, doer.user));
  }

  private async getKey(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'read', 'user');
    const id = pathInt(c.params[0]);
    const key = id > 0 ? this.svc.db.publicKeyById(id) : undefined;
    if (!key) throw new HttpError(E.githostNotFound, "The target couldn't be found.");
    sendJson(c.res, 200, this.keyJson(key, doer.user));
  }

  private async deleteKey(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'user');
    const id = pathInt(c.params[0]);
    const key = id > 0 ? this.svc.db.publicKeyById(id) : undefined;
    if (!key) throw new HttpError(E.githostNotFound, "The target couldn't be found.");
    if (key.owner_id !== doer.user.id) throw new HttpError(E.githostDenied, 'You do not have access to this key');
    this.svc.db.deletePublicKey(doer.user.id, key.id);
    this.log.info({ user: doer.user.name, fingerprint: key.fingerprint }, 'deleted SSH key');
    c.res.writeHead(204).end();
  }

  // --- branch protections (Gitea's /repos/{owner}/{repo}/branch_protections) --------

  /** Gitea: a token, then repository admin (reqToken, reqAdmin). */
  private protectionRepo(c: Ctx, level: 'read' | 'write'): RepoRow {
    const doer = this.requireDoer(c);
    this.requireScope(doer, level, 'repository');
    const { repo } = this.repoParam(c);
    if (!this.svc.permission(repo, doer.user).admin)
      throw new HttpError(E.githostDenied, 'user should be an owner or a collaborator with admin write of a repository');
    return repo;
  }

  private protectionParam(c: Ctx, repo: RepoRow): ReturnType<typeof loadRule> {
    const row = this.svc.db.protectionByName(repo.id, c.params[2] ?? '');
    if (!row) throw new HttpError(E.githostNotFound, "The target couldn't be found.");
    return loadRule(row);
  }

  private async listProtections(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'read');
    sendJson(c.res, 200, sortedRules(this.svc.db, repo.id).map(toBranchProtection));
  }

  private async createProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'write');
    const body = await this.body(c);
    const f = new Fields(body);
    const ruleName = f.string('rule_name', 'RuleName', { max: 255 }) || f.string('branch_name', 'BranchName', { max: 255 });
    const priority = f.int('priority', 'Priority') ?? 0;
    if (!ruleName) throw new HttpError(E.githostRequestInvalid, 'both rule_name and branch_name are empty');
    if (this.svc.db.protectionByName(repo.id, ruleName)) throw new HttpError(E.githostRuleExists, 'Branch protection already exist');
    const rule = applyOptions(this.svc.db, emptyRule(), body);
    const row = this.svc.db.insertProtection({ repo_id: repo.id, rule_name: ruleName, priority, rule: JSON.stringify(rule) });
    if (!row) throw new HttpError(E.githostRuleExists, 'Branch protection already exist');
    this.log.info({ repo: repo.name, rule: ruleName, by: c.doer?.user.name }, 'created branch protection');
    sendJson(c.res, 201, toBranchProtection(loadRule(row)));
  }

  private async getProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'read');
    sendJson(c.res, 200, toBranchProtection(this.protectionParam(c, repo)));
  }

  private async editProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'write');
    const current = this.protectionParam(c, repo);
    const body = await this.body(c);
    const priority = new Fields(body).int('priority', 'Priority') ?? current.row.priority;
    const rule = applyOptions(this.svc.db, current.rule, body);
    this.svc.db.updateProtection(current.row.id, priority, JSON.stringify(rule));
    sendJson(c.res, 200, toBranchProtection(loadRule(this.svc.db.protectionByName(repo.id, current.row.rule_name)!)));
  }

  private async deleteProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'write');
    const current = this.protectionParam(c, repo);
    this.svc.db.deleteProtection(repo.id, current.row.id);
    this.log.info({ repo: repo.name, rule: current.row.rule_name, by: c.doer?.user.name }, 'deleted branch protection');
    c.res.writeHead(204).end();
  }

  // --- tag protections (Gitea's /repos/{owner}/{repo}/tag_protections) ----------------

  /** The usernames of whitelist_usernames, each an existing user (Gitea answers 422 otherwise). */
  private tagAllowlist(body: Record<string, unknown>): string[] | undefined {
    const v = body['whitelist_usernames'];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((n) => typeof n !== 'string'))
      throw new HttpError(E.githostFieldInvalid, '[WhitelistUsernames]: must be a list of usernames');
    for (const name of v as string[])
      if (!this.svc.db.userByName(name)) throw new HttpError(E.githostUserUnknown, `user does not exist [uid: 0, name: ${name}]`);
    return v as string[];
  }

  private tagProtectionParam(c: Ctx, repo: RepoRow): ProtectedTagRow {
    const id = Number(c.params[2] ?? '');
    const row = Number.isSafeInteger(id) ? this.svc.db.tagProtectionById(repo.id, id) : undefined;
    if (!row) throw new HttpError(E.githostNotFound, "The target couldn't be found.");
    return row;
  }

  private async listTagProtections(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'read');
    sendJson(c.res, 200, this.svc.db.tagProtectionsOf(repo.id).map(toTagProtection));
  }

  private async createTagProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'write');
    const body = await this.body(c);
    const pattern = new Fields(body).string('name_pattern', 'NamePattern', { max: 255 }).trim();
    if (!pattern) throw new HttpError(E.githostRequestInvalid, 'name_pattern are empty');
    tagMatcher(pattern);
    const users = this.tagAllowlist(body) ?? [];
    const row = this.svc.db.insertTagProtection(repo.id, pattern, users);
    if (!row) throw new HttpError(E.githostRuleExists, 'Tag protection already exist');
    this.log.info({ repo: repo.name, pattern, by: c.doer?.user.name }, 'created tag protection');
    sendJson(c.res, 201, toTagProtection(row));
  }

  private async getTagProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'read');
    sendJson(c.res, 200, toTagProtection(this.tagProtectionParam(c, repo)));
  }

  private async editTagProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'write');
    const current = this.tagProtectionParam(c, repo);
    const body = await this.body(c);
    const given = body['name_pattern'];
    const pattern = typeof given === 'string' ? given.trim() : current.name_pattern;
    if (!pattern) throw new HttpError(E.githostRequestInvalid, 'name_pattern are empty');
    tagMatcher(pattern);
    const users = this.tagAllowlist(body) ?? usernamesOf(current);
    this.svc.db.updateTagProtection(current.id, pattern, users);
    sendJson(c.res, 200, toTagProtection(this.svc.db.tagProtectionById(repo.id, current.id)!));
  }

  private async deleteTagProtection(c: Ctx): Promise<void> {
    const repo = this.protectionRepo(c, 'write');
    const current = this.tagProtectionParam(c, repo);
    this.svc.db.deleteTagProtection(repo.id, current.id);
    this.log.info({ repo: repo.name, pattern: current.name_pattern, by: c.doer?.user.name }, 'deleted tag protection');
    c.res.writeHead(204).end();
  }

  // --- repositories ------------------------------------------------------------------

  /** GET /user/repos: the caller's own repositories and those they collaborate on, by name. */
  private async listMyRepos(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'read', 'repository');
    const publicOnly = doer.via === 'token' && doer.scopes.includes('public-only');
    const collab = this.svc.db.collaborationsOf(doer.user.id);
    const rows = this.svc.db
      .allRepos()
      .filter((r) => r.owner_id === doer.user.id || collab.has(r.id))
      .filter((r) => !(publicOnly && r.private === 1))
      .map((repo) => ({ repo, owner: this.svc.db.userById(repo.owner_id) }))
      .filter((x): x is { repo: RepoRow & { owner_lower: string }; owner: UserRow } => x.owner !== undefined)
      .sort((a, b) => cmp(a.repo.lower_name, b.repo.lower_name) || a.repo.id - b.repo.id);
    await this.sendPage(c, rows, this.reposJson(doer.user));
  }

  /** GET /users/{username}/repos: the user's repositories the caller may read, most recently updated first. */
  private async listUserRepos(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'repository');
    const owner = this.userParam(c.params[0], c.doer);
    const doer = c.doer?.user;
    const publicOnly = c.doer?.via === 'token' && c.doer.scopes.includes('public-only');
    const rows = this.svc.db
      .reposOfOwner(owner.id)
      .filter((repo) => this.svc.permission(repo, doer).pull && !(publicOnly && repo.private === 1))
      .sort((a, b) => b.updated_unix - a.updated_unix || b.id - a.id)
      .map((repo) => ({ repo, owner }));
    await this.sendPage(c, rows, this.reposJson(doer));
  }

  /** GET /repos/search: Gitea's search with its filters, {ok, data} and paging headers. */
  private async searchRepos(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'repository');
    const q = c.query;
    const doer = c.doer?.user;
    const formBool = (k: string) => q.get(k) === 'true' || q.get(k) === '1' || q.get(k) === 'on';
    const formInt = (k: string) => pathInt(q.get(k) ?? '');
    let private_ = doer !== undefined && (!q.get('private') || formBool('private'));
    if (c.doer?.via === 'token' && c.doer.scopes.includes('public-only')) private_ = false;
    const keyword = (q.get('q') ?? '').trim().toLowerCase();
    const uid = formInt('uid');
    const exclusive = formBool('exclusive');
    const mode = q.get('mode') ?? '';
    if (!['', 'source', 'fork', 'mirror', 'collaborative'].includes(mode)) throw new HttpError(E.githostFieldInvalid, `Invalid search mode: "${mode}"`);
    const sort = q.get('sort') ?? '';
    const order = sort ? q.get('order') || 'asc' : 'asc';
    if (sort && order !== 'asc' && order !== 'desc') throw new HttpError(E.githostFieldInvalid, `Invalid sort order: "${order}"`);
    if (sort && !SORT_KEYS.includes(sort)) throw new HttpError(E.githostFieldInvalid, `Invalid sort mode: "${sort}"`);
    const includeDesc = formBool('includeDesc');
    const isPrivate = q.get('is_private') ? formBool('is_private') : undefined;
    // githost has no archived or template repositories, no forks, stars, teams or topics
    const none =
      (q.get('archived') && formBool('archived')) ||
      (q.get('template') && formBool('template')) ||
      mode === 'fork' ||
      formInt('starredBy') > 0 ||
      formInt('team_id') > 0 ||
      formBool('topic');
    const collab = uid > 0 ? this.svc.db.collaborationsOf(uid) : new Map<number, string>();
    const owners = new Map<number, UserRow | undefined>();
    const ownerOf = (id: number) => {
      if (!owners.has(id)) owners.set(id, this.svc.db.userById(id));
      return owners.get(id);
    };
    const rows = none
      ? []
      : this.svc.db.allRepos().flatMap((repo) => {
          const owner = ownerOf(repo.owner_id);
          if (!owner || !this.canSeeUser(owner, doer)) return [];
          // anonymous callers and private=false see public repositories only; others what they can read
          if (repo.private === 1 && (!private_ || !this.svc.permission(repo, doer).pull)) return [];
          if (isPrivate !== undefined && (repo.private === 1) !== isPrivate) return [];
          if (uid > 0) {
            const owns = repo.owner_id === uid;
            const collaborates = collab.has(repo.id);
            if (mode === 'collaborative' ? !collaborates : exclusive ? !owns : !(owns || collaborates)) return [];
          } else if (mode === 'collaborative') return [];
          if ((mode === 'source' || mode === 'collaborative') && repo.mirror === 1) return [];
          if (mode === 'mirror' && repo.mirror !== 1) return [];
          if (keyword && !repo.lower_name.includes(keyword) && !(includeDesc && repo.description.toLowerCase().includes(keyword))) return [];
          return [{ repo, owner }];
        });
    const dir = order === 'desc' ? -1 : 1;
    const by: Record<string, (a: RepoRow, b: RepoRow) => number> = {
      alpha: (a, b) => cmp(ownerOf(a.owner_id)?.lower_name ?? '', ownerOf(b.owner_id)?.lower_name ?? '') || cmp(a.lower_name, b.lower_name),
      created: (a, b) => a.created_unix - b.created_unix || a.id - b.id,
      updated: (a, b) => a.updated_unix - b.updated_unix || a.id - b.id,
      id: (a, b) => a.id - b.id,
    };
    const sorter = sort
      ? (by[sort] ?? (by['id'] as (a: RepoRow, b: RepoRow) => number))
      : (a: RepoRow, b: RepoRow) => cmp(a.lower_name, b.lower_name) || a.id - b.id;
    const priority = formInt('priority_owner_id');
    rows.sort(
      (a, b) => (priority > 0 ? Number(b.repo.owner_id === priority) - Number(a.repo.owner_id === priority) : 0) || (sort ? dir : 1) * sorter(a.repo, b.repo),
    );
    await this.sendPage(c, rows, this.reposJson(doer), (data) => ({ ok: true, data }));
  }

  private async createRepo(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'repository');
    const f = new Fields(await this.body(c));
    const name = f.string('name', 'Name', { required: true, max: 100 });
    const description = f.string('description', 'Description', { max: 2048 });
    const priv = f.bool('private', 'Private');
    const defaultBranch = f.string('default_branch', 'DefaultBranch', { max: 255 });
    const autoInit = f.bool('auto_init', 'AutoInit');
    if (defaultBranch && (!/^\w[\w./-]*$/.test(defaultBranch) || /\.\.|\/\/|\/\.|\.lock$|[/.]$/.test(defaultBranch)))
      throw new HttpError(E.githostFieldInvalid, `[DefaultBranch]: ${JSON.stringify(defaultBranch)} is not a valid branch name`);
    if (defaultBranch) checkRefName('branch', defaultBranch);
    const repo = await this.svc.createRepo({ owner: doer.user, name, description, private: priv, defaultBranch, autoInit });
    sendJson(c.res, 201, await this.repoJson(doer.user, repo, doer.user));
  }

  private async migrate(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'repository');
    const f = new Fields(await this.body(c));
    const cloneAddr = f.string('clone_addr', 'CloneAddr', { required: true, max: 2048 });
    const repoName = f.string('repo_name', 'RepoName', { required: true, max: 100 });
    const uid = f.int('uid', 'RepoOwnerID');
    const ownerName = f.string('repo_owner', 'RepoOwner');
    const description = f.string('description', 'Description', { max: 2048 });
    const mirror = f.bool('mirror', 'Mirror');
    const priv = f.bool('private', 'Private');
    for (const [k, n] of [
      ['issues', 'Issues'],
      ['milestones', 'Milestones'],
      ['labels', 'Labels'],
      ['releases', 'Releases'],
      ['pull_requests', 'PullRequests'],
      ['wiki', 'Wiki'],
      ['lfs', 'LFS'],
    ] as const)
      f.bool(k, n);
    const authUsername = f.string('auth_username', 'AuthUsername');
    const authPassword = f.string('auth_password', 'AuthPassword');
    const authToken = f.string('auth_token', 'AuthToken');
    f.string('service', 'Service');
    let owner: UserRow | undefined = doer.user;
    if (ownerName) owner = isValidUsername(ownerName) ? this.svc.db.userByName(ownerName) : undefined;
    else if (uid !== undefined && uid !== 0) owner = this.svc.db.userById(uid);
    if (!owner) throw new HttpError(E.githostUserUnknown, `user does not exist [${ownerName ? `name: ${ownerName}` : `uid: ${uid ?? ''}`}]`);
    if (owner.id !== doer.user.id && doer.user.is_admin !== 1) {
      throw new HttpError(
        E.githostDenied,
        `Given user is not an organization, and only a site admin may migrate into another user's account [owner: ${owner.name}]`,
      );
    }
    const repo = await this.svc.migrate({
      owner,
      doer: doer.user,
      name: repoName,
      description,
      private: priv,
      mirror,
      cloneAddr,
      // as Gitea: a token goes to the source as "oauth2:<token>" and wins over a name and password
      authUsername: authToken ? 'oauth2' : authUsername,
      authPassword: authToken || authPassword,
    });
    sendJson(c.res, 201, await this.repoJson(owner, repo, doer.user));
  }

  private async getRepo(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'repository');
    const { owner, repo } = this.repoParam(c);
    sendJson(c.res, 200, await this.repoJson(owner, repo, c.doer?.user));
  }

  private async addCollaborator(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'repository');
    const { repo } = this.repoParam(c);
    if (!this.svc.permission(repo, doer.user).admin)
      throw new HttpError(E.githostDenied, 'only the owner, a repository admin or a site admin can add collaborators');
    const name = c.params[2];
    const user = name && isValidUsername(name) ? this.svc.db.userByName(name) : undefined;
    if (!user) throw new HttpError(E.githostUserUnknown, `user does not exist [name: ${name ?? ''}]`);
    const f = new Fields(await this.body(c));
    const mode = f.string('permission', 'Permission') || 'write';
    if (!['read', 'write', 'admin'].includes(mode))
      throw new HttpError(E.githostFieldInvalid, `[Permission]: must be read, write or admin, got ${JSON.stringify(mode)}`);
    this.svc.db.setCollaboration(repo.id, user.id, mode);
    c.res.writeHead(204).end();
  }

  private async getCommit(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'repository');
    const { owner, repo } = this.repoParam(c);
    const sha = c.params[2] ?? '';
    const links = this.links();
    const out = await this.svc.commit(owner, repo, sha, links.base, (u) => toUser(u, c.doer?.user, links));
    if (!out) throw new HttpError(E.githostNotFound, `commit doesn't exist: ${sha}`);
    sendJson(c.res, 200, out);
  }
}

const SORT_KEYS = ['alpha', 'created', 'updated', 'size', 'git_size', 'lfs_size', 'id', 'stars', 'forks'];

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A decimal integer as Go's strconv parses it for Gitea's FormInt/PathParamInt64; 0 otherwise. */
function pathInt(text: string | undefined): number {
  if (!text || !/^[+-]?\d{1,15}$/.test(text)) return 0;
  return Number(text);
}

/** Gitea's list options: page from 1, limit 30 by default and at most 50. */
function listOptions(q: URLSearchParams): { page: number; limit: number } {
  const page = Math.max(pathInt(q.get('page') ?? ''), 1);
  const asked = pathInt(q.get('limit') ?? '');
  return { page, limit: asked <= 0 ? 30 : Math.min(asked, 50) };
}

/** Go's url.Values.Encode: keys sorted, QueryEscape (space as "+", only A-Za-z0-9-_.~ unescaped). */
function goQuery(q: URLSearchParams): string {
  const esc = (s: string) =>
    encodeURIComponent(s)
      .replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/%20/g, '+');
  const keys = [...new Set(q.keys())].sort();
  return keys.flatMap((k) => q.getAll(k).map((v) => `${esc(k)}=${esc(v)}`)).join('&');
}

/** Gitea's Link header (genAPILinks): next, last, first, prev, as they apply. */
function linkHeader(url: string, query: URLSearchParams, total: number, pageSize: number, asked: number): string {
  const totalPages = Math.ceil(total / pageSize);
  const current = Math.max(Math.min(asked, totalPages), 1);
  const at = (page: number) => {
    const q = new URLSearchParams(query);
    q.set('page', String(page));
    return `<${url}?${goQuery(q)}>`;
  };
  const hasNext = current * pageSize < total;
  const links: string[] = [];
  if (hasNext) links.push(`${at(current + 1)}; rel="next"`);
  if (hasNext) links.push(`${at(totalPages)}; rel="last"`);
  if (current !== 1) links.push(`${at(1)}; rel="first"`);
  if (current > 1) links.push(`${at(current - 1)}; rel="prev"`);
  return links.join(',');
}

/** Route parts: literal, ":param" (one segment), "*param" (last: the rest, joined by "/", as Gitea's "/*"). */
function match(parts: string[], segs: string[]): string[] | undefined {
  const rest = parts.at(-1)?.startsWith('*') === true;
  if (rest ? segs.length < parts.length : parts.length !== segs.length) return undefined;
  const params: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string;
    const s = segs[i] as string;
    if (p.startsWith('*')) params.push(segs.slice(i).join('/'));
    else if (p.startsWith(':')) params.push(s);
    else if (p !== s) return undefined;
  }
  return params;
}
