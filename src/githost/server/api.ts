// The Gitea-compatible /api/v1: routes, authentication and authorization per route,
// Gitea's status codes and error body {"message", "url"}.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { definitionOf, isStraitError } from '../../base/errors/index.js';
import type { Logger } from '../../base/log/index.js';
import type { Authenticator, Doer } from './auth.js';
import { toGpgKey, toRepo, toUser, type Links } from './convert.js';
import type { RepoRow, UserRow } from './db.js';
import { pathSegments } from '../../platform/http/index.js';
import { HttpError, Fields, readJsonBody, sendError, sendJson } from './http-io.js';
import { isValidRepoName, isValidUsername } from './names.js';
import { normalizeScopes, scopeAllows, type ScopeCategory } from './scopes.js';
import type { GithostService } from './service.js';
import { createToken, createUser } from './users.js';

export const GITEA_COMPAT_VERSION = '1.21.11';

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
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

const notFound = (what: string) => new HttpError(404, `The target couldn't be found: ${what}`);

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
    r('POST', '/user/repos', (c) => this.createRepo(c));
    r('POST', '/repos/migrate', (c) => this.migrate(c));
    r('GET', '/repos/:owner/:repo', (c) => this.getRepo(c));
    r('PUT', '/repos/:owner/:repo/collaborators/:collaborator', (c) => this.addCollaborator(c));
    r('GET', '/repos/:owner/:repo/git/commits/:sha', (c) => this.getCommit(c));
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
        const ctx: Ctx = { req, res, params, doer, authScheme: header.split(' ')[0]?.toLowerCase() ?? '' };
        if (doer?.via === 'password' && doer.user.must_change_password === 1 && !route.parts.includes('tokens')) {
          throw new HttpError(403, 'You must change your password. Change it at: /user/settings/account');
        }
        await route.handler(ctx);
        return;
      }
      if (pathMatched) throw new HttpError(405, `method ${req.method ?? ''} is not allowed on ${path}`);
      throw new HttpError(404, `The target couldn't be found: no API route ${req.method ?? ''} ${path}`);
    } catch (err) {
      req.resume();
      if (err instanceof HttpError) {
        const challenge = err.status === 401 ? { 'WWW-Authenticate': 'Basic realm="strait githost"' } : undefined;
        sendError(req, res, err.status, err.message, this.swaggerURL, challenge);
      } else if (isStraitError(err)) {
        // Gitea's status where it differs from the kind's (422 for most refused input)
        const status = definitionOf(err.code)?.giteaStatus ?? err.httpStatus;
        sendError(req, res, status, err.message, this.swaggerURL);
      } else {
        this.log.error({ err }, 'githost API handler failed');
        sendError(req, res, 500, 'internal server error; see the githost log', this.swaggerURL);
      }
    }
  }

  // --- helpers ---------------------------------------------------------------------

  private requireDoer(c: Ctx): Doer {
    if (!c.doer) throw new HttpError(401, 'token is required');
    return c.doer;
  }

  private requireScope(doer: Doer, level: 'read' | 'write', category: ScopeCategory): void {
    if (doer.via === 'token' && !scopeAllows(doer.scopes, level, category)) {
      throw new HttpError(403, `token does not have at least one of required scope(s): [${level}:${category}], token scope=${doer.scopes.join(',')}`);
    }
  }

  private requireAdmin(doer: Doer): void {
    if (doer.user.is_admin !== 1) throw new HttpError(403, 'user should be the site admin');
  }

  private userParam(name: string | undefined, doer: Doer | undefined): UserRow {
    const u = name && isValidUsername(name) ? this.svc.db.userByName(name) : undefined;
    if (!u) throw notFound(`user redirect does not exist [name: ${name ?? ''}]`);
    if (u.visibility === 'private' && !(doer && (doer.user.id === u.id || doer.user.is_admin === 1))) throw notFound(`user redirect does not exist [name: ${name ?? ''}]`);
    if (u.visibility === 'limited' && !doer) throw notFound(`user redirect does not exist [name: ${name ?? ''}]`);
    return u;
  }

  private repoParam(c: Ctx): { owner: UserRow; repo: RepoRow } {
    const [ownerName, repoName] = c.params;
    const owner = ownerName && isValidUsername(ownerName) ? this.svc.db.userByName(ownerName) : undefined;
    const repo = owner && repoName && isValidRepoName(repoName) ? this.svc.db.repoByName(owner.id, repoName) : undefined;
    if (!owner || !repo || !this.svc.permission(repo, c.doer?.user).pull) throw notFound(`repository does not exist [${ownerName ?? ''}/${repoName ?? ''}]`);
    return { owner, repo };
  }

  private async repoJson(owner: UserRow, repo: RepoRow, doer: UserRow | undefined): Promise<Record<string, unknown>> {
    return toRepo(repo, owner, doer, { empty: await this.svc.isEmpty(owner, repo), permissions: this.svc.permission(repo, doer) }, this.links());
  }

  private body(c: Ctx): Promise<Record<string, unknown>> {
    return readJsonBody(c.req, this.svc.settings.maxBodyBytes, this.svc.settings.bodyTimeoutMs);
  }

  // --- tokens ------------------------------------------------------------------------

  private basicOnly(c: Ctx): Doer {
    if (c.authScheme !== 'basic' || !c.doer) throw new HttpError(401, 'auth required: this endpoint takes HTTP basic auth with the user\'s name and password');
    if (c.doer.via !== 'password') throw new HttpError(401, 'auth method not allowed: use the password, not a token');
    return c.doer;
  }

  private selfOrAdmin(doer: Doer, name: string | undefined): UserRow {
    const target = this.userParam(name, doer);
    if (doer.user.id !== target.id && doer.user.is_admin !== 1) throw new HttpError(403, 'doer should be the site admin or be same as the contextUser');
    return target;
  }

  private async createToken(c: Ctx): Promise<void> {
    const doer = this.basicOnly(c);
    const target = this.selfOrAdmin(doer, c.params[0]);
    const f = new Fields(await this.body(c));
    const name = f.string('name', 'Name', { required: true, max: 255 });
    const scopes = normalizeScopes(f.stringList('scopes', 'Scopes'));
    if (!scopes) throw new HttpError(400, `invalid access token scope provided; known scopes: all, read:user, write:user, read:repository, write:repository, read:admin, write:admin, ...`);
    const made = createToken(this.svc.db, target.id, name, scopes);
    if (!made) throw new HttpError(400, 'access token name has been used already');
    sendJson(c.res, 201, { id: made.row.id, name: made.row.name, sha1: made.token, token_last_eight: made.row.token_last_eight, scopes });
  }

  private async listTokens(c: Ctx): Promise<void> {
    const doer = this.basicOnly(c);
    const target = this.selfOrAdmin(doer, c.params[0]);
    sendJson(c.res, 200, this.svc.db.tokensOf(target.id).map((t) => ({ id: t.id, name: t.name, sha1: '', token_last_eight: t.token_last_eight, scopes: t.scopes.split(',') })));
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
    if (!['public', 'limited', 'private'].includes(visibility)) throw new HttpError(422, `[Visibility]: must be public, limited or private, got ${JSON.stringify(visibility)}`);
    if (!password) throw new HttpError(400, 'password is required for a local user');
    const user = await createUser(this.svc.db, {
      username, email, password, loginName, fullName, mustChangePassword: mustChange,
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
    if (c.doer) this.requireScope(c.doer, 'read', 'user');
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
    if (!primary) throw new HttpError(500, 'no key was stored');
    this.log.info({ user: doer.user.name, keyID: primary.key_id }, 'added GPG key');
    sendJson(c.res, 201, toGpgKey(primary, subs));
  }

  // --- repositories ------------------------------------------------------------------

  private async createRepo(c: Ctx): Promise<void> {
    const doer = this.requireDoer(c);
    this.requireScope(doer, 'write', 'repository');
    const f = new Fields(await this.body(c));
    const name = f.string('name', 'Name', { required: true, max: 100 });
    const description = f.string('description', 'Description', { max: 2048 });
    const priv = f.bool('private', 'Private');
    const defaultBranch = f.string('default_branch', 'DefaultBranch', { max: 255 });
    const autoInit = f.bool('auto_init', 'AutoInit');
    if (defaultBranch && (!/^\w[\w./-]*$/.test(defaultBranch) || /\.\.|\/\/|\/\.|\.lock$|[/.]$/.test(defaultBranch))) throw new HttpError(422, `[DefaultBranch]: ${JSON.stringify(defaultBranch)} is not a valid branch name`);
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
    for (const [k, n] of [['issues', 'Issues'], ['milestones', 'Milestones'], ['labels', 'Labels'], ['releases', 'Releases'],
      ['pull_requests', 'PullRequests'], ['wiki', 'Wiki'], ['lfs', 'LFS']] as const) f.bool(k, n);
    const authUsername = f.string('auth_username', 'AuthUsername');
    const authPassword = f.string('auth_password', 'AuthPassword');
    const authToken = f.string('auth_token', 'AuthToken');
    f.string('service', 'Service');
    let owner: UserRow | undefined = doer.user;
    if (ownerName) owner = isValidUsername(ownerName) ? this.svc.db.userByName(ownerName) : undefined;
    else if (uid !== undefined && uid !== 0) owner = this.svc.db.userById(uid);
    if (!owner) throw new HttpError(422, `user does not exist [${ownerName ? `name: ${ownerName}` : `uid: ${uid ?? ''}`}]`);
    if (owner.id !== doer.user.id && doer.user.is_admin !== 1) {
      throw new HttpError(403, `Given user is not an organization, and only a site admin may migrate into another user's account [owner: ${owner.name}]`);
    }
    const repo = await this.svc.migrate({
      owner, doer: doer.user, name: repoName, description, private: priv, mirror, cloneAddr,
      authUsername, authPassword: authToken || authPassword,
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
    if (!this.svc.permission(repo, doer.user).admin) throw new HttpError(403, 'only the owner, a repository admin or a site admin can add collaborators');
    const name = c.params[2];
    const user = name && isValidUsername(name) ? this.svc.db.userByName(name) : undefined;
    if (!user) throw new HttpError(422, `user does not exist [name: ${name ?? ''}]`);
    const f = new Fields(await this.body(c));
    const mode = f.string('permission', 'Permission') || 'write';
    if (!['read', 'write', 'admin'].includes(mode)) throw new HttpError(422, `[Permission]: must be read, write or admin, got ${JSON.stringify(mode)}`);
    this.svc.db.setCollaboration(repo.id, user.id, mode);
    c.res.writeHead(204).end();
  }

  private async getCommit(c: Ctx): Promise<void> {
    if (c.doer) this.requireScope(c.doer, 'read', 'repository');
    const { owner, repo } = this.repoParam(c);
    const sha = c.params[2] ?? '';
    const links = this.links();
    const out = await this.svc.commit(owner, repo, sha, links.base, (u) => toUser(u, c.doer?.user, links));
    if (!out) throw notFound(`object does not exist [id: ${sha}, rel_path: ]`);
    sendJson(c.res, 200, out);
  }
}

function match(parts: string[], segs: string[]): string[] | undefined {
  if (parts.length !== segs.length) return undefined;
  const params: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as string;
    const s = segs[i] as string;
    if (p.startsWith(':')) params.push(s);
    else if (p !== s) return undefined;
  }
  return params;
}
