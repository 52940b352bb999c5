// Who is calling, in every form Gitea accepts: "Authorization: token <40 hex>" or
// "Bearer <40 hex>"; HTTP basic with a name and password; HTTP basic with a token
// as the password under ANY user name (git's credential prompt, "oauth2:<token>" in
// migrations); HTTP basic with the token as the user name and an empty or
// "x-oauth-basic" password. A token always acts as its owner with its scopes,
// whatever name came with it. Successful password checks are cached for a minute
// (keyed by a hash of the credentials) so git's several requests per clone or push
// do not each pay the PBKDF2 cost.
import { E } from '../../base/errors/index.js';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { GithostDb, UserRow } from './db.js';
import { HttpError } from './http-io.js';
import { hashToken, verifyPassword } from './secrets.js';

export interface Doer {
  user: UserRow;
  via: 'password' | 'token';
  scopes: string[];
}

const TOKEN = /^[0-9a-f]{40}$/;
const CACHE_MS = 60_000;
const CACHE_MAX = 1000;

export class Authenticator {
  private readonly cache = new Map<string, { uid: number; until: number }>();

  constructor(private readonly db: GithostDb) {}

  /** The caller, undefined when no credentials were sent; HttpError 401 for wrong ones. */
  async identify(headers: IncomingHttpHeaders): Promise<Doer | undefined> {
    const header = headers['authorization'];
    if (!header) return undefined;
    const sp = header.indexOf(' ');
    const scheme = (sp === -1 ? header : header.slice(0, sp)).toLowerCase();
    const value = sp === -1 ? '' : header.slice(sp + 1).trim();
    if (scheme === 'token' || scheme === 'bearer') return this.byToken(value);
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new HttpError(E.githostUnauthenticated, 'invalid basic auth header: expected base64 of "username:password"');
      return this.byBasic(decoded.slice(0, colon), decoded.slice(colon + 1));
    }
    throw new HttpError(
      E.githostUnauthenticated,
      `unsupported authorization scheme ${JSON.stringify(scheme.slice(0, 20))}; use "token <ACCESS_TOKEN>" or HTTP basic auth`,
    );
  }

  byToken(token: string): Doer {
    if (!TOKEN.test(token))
      throw new HttpError(E.githostUnauthenticated, 'invalid access token: a token is 40 hex characters as POST /api/v1/users/{username}/tokens returned it');
    const doer = this.tokenDoer(token);
    if (!doer) throw new HttpError(E.githostUnauthenticated, 'invalid access token: no token matches it (was it deleted?)');
    return doer;
  }

  /** The owner of `token` with its scopes (last use recorded), or undefined when no token matches. */
  private tokenDoer(token: string): Doer | undefined {
    const row = this.db.tokenByHash(hashToken(token));
    const user = row ? this.db.userById(row.uid) : undefined;
    if (!row || !user) return undefined;
    this.checkActive(user);
    this.db.touchToken(row);
    return { user, via: 'token', scopes: row.scopes.split(',') };
  }

  /**
   * HTTP basic, as Gitea reads it: an empty or "x-oauth-basic" password means the
   * user name is the token; otherwise the password may be a token (of anyone: the
   * name is not consulted) and, when no token matches, it is checked as the password.
   */
  async byBasic(name: string, password: string): Promise<Doer> {
    const nameIsToken = password === '' || password === 'x-oauth-basic';
    const candidate = nameIsToken ? name : password;
    if (TOKEN.test(candidate)) {
      const doer = this.tokenDoer(candidate);
      if (doer) return doer;
      if (nameIsToken) throw new HttpError(E.githostUnauthenticated, 'invalid access token: no token matches it (was it deleted?)');
    }
    if (nameIsToken)
      throw new HttpError(
        E.githostUnauthenticated,
        name === '' ? 'invalid basic auth header: no user name or token' : `user's password is invalid [name: ${name}]`,
      );
    return this.byPassword(name, password);
  }

  async byPassword(name: string, password: string): Promise<Doer> {
    const user = this.db.userByName(name) ?? (name.includes('@') ? this.db.userByEmail(name) : undefined);
    if (!user) throw new HttpError(E.githostUnauthenticated, `user does not exist [name: ${name}]`);
    const key = createHash('sha256').update(`${user.id}\0${user.passwd_hash}\0${password}`).digest('hex');
    const hit = this.cache.get(key);
    const now = Date.now();
    if (hit && hit.until > now && hit.uid === user.id) {
      this.checkActive(user);
      return { user, via: 'password', scopes: ['all'] };
    }
    if (await verifyPassword(password, user.passwd_salt, user.passwd_algo, user.passwd_hash)) {
      this.checkActive(user);
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(key, { uid: user.id, until: now + CACHE_MS });
      return { user, via: 'password', scopes: ['all'] };
    }
    throw new HttpError(E.githostUnauthenticated, `user's password is invalid [name: ${user.name}]`);
  }

  private checkActive(user: UserRow): void {
    if (user.prohibit_login) throw new HttpError(E.githostDenied, `user is prohibited from signing in [name: ${user.name}]`);
    if (!user.is_active) throw new HttpError(E.githostDenied, `user is not active [name: ${user.name}]`);
  }
}
