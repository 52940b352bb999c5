// Who is calling: HTTP basic (name + password, or name + token as password) or
// "Authorization: token <40 hex>". Successful password checks are cached for a
// minute (keyed by a hash of the credentials) so git's several requests per
// clone or push do not each pay the PBKDF2 cost.
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
      if (colon <= 0) throw new HttpError(401, 'invalid basic auth header: expected base64 of "username:password"');
      return this.byPassword(decoded.slice(0, colon), decoded.slice(colon + 1));
    }
    throw new HttpError(401, `unsupported authorization scheme ${JSON.stringify(scheme.slice(0, 20))}; use "token <ACCESS_TOKEN>" or HTTP basic auth`);
  }

  byToken(token: string): Doer {
    if (!TOKEN.test(token)) throw new HttpError(401, 'invalid access token: a token is 40 hex characters as POST /api/v1/users/{username}/tokens returned it');
    const row = this.db.tokenByHash(hashToken(token));
    const user = row ? this.db.userById(row.uid) : undefined;
    if (!row || !user) throw new HttpError(401, 'invalid access token: no token matches it (was it deleted?)');
    this.checkActive(user);
    return { user, via: 'token', scopes: row.scopes.split(',') };
  }

  async byPassword(name: string, password: string): Promise<Doer> {
    const user = this.db.userByName(name) ?? (name.includes('@') ? this.db.userByEmail(name) : undefined);
    if (!user) throw new HttpError(401, `user does not exist [name: ${name}]`);
    // a token may stand in for the password (git clients do this); try it first, it is cheap
    if (TOKEN.test(password)) {
      const row = this.db.tokenByHash(hashToken(password));
      if (row && row.uid === user.id) {
        this.checkActive(user);
        return { user, via: 'token', scopes: row.scopes.split(',') };
      }
    }
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
    throw new HttpError(401, `user's password is invalid [name: ${user.name}]`);
  }

  private checkActive(user: UserRow): void {
    if (user.prohibit_login) throw new HttpError(403, `user is prohibited from signing in [name: ${user.name}]`);
    if (!user.is_active) throw new HttpError(403, `user is not active [name: ${user.name}]`);
  }
}
