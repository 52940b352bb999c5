// Users and tokens: creation shared by the admin command and the API.
import { E } from '../../base/errors/index.js';
import type { GithostDb, TokenRow, UserRow } from './db.js';
import { checkEmail, checkUsername } from './names.js';
import { PASSWORD_ALGO, hashPassword, hashToken, newToken, randomSalt } from './secrets.js';

export const MIN_PASSWORD_LENGTH = 8;

export interface CreateUserInput {
  username: string;
  email: string;
  password: string;
  loginName?: string;
  fullName?: string;
  admin?: boolean;
  mustChangePassword?: boolean;
  visibility?: 'public' | 'limited' | 'private';
}

export async function createUser(db: GithostDb, input: CreateUserInput): Promise<UserRow> {
  const name = checkUsername(input.username);
  const email = checkEmail(input.email);
  if (typeof input.password !== 'string' || input.password.length < MIN_PASSWORD_LENGTH) throw E.githostPasswordTooShort(MIN_PASSWORD_LENGTH);
  // cheap checks before the slow hash; insertUser re-checks inside its transaction
  if (db.userByName(name)) throw E.githostUserExists(name);
  if (db.userByEmail(email)) throw E.githostEmailUsed(email);
  const salt = randomSalt();
  const hash = await hashPassword(input.password, salt);
  return db.insertUser({
    name,
    login_name: input.loginName || name,
    full_name: input.fullName ?? '',
    email,
    passwd_hash: hash,
    passwd_salt: salt,
    passwd_algo: PASSWORD_ALGO,
    must_change_password: input.mustChangePassword ? 1 : 0,
    is_admin: input.admin ? 1 : 0,
    is_active: 1,
    prohibit_login: 0,
    restricted: 0,
    visibility: input.visibility ?? 'public',
  });
}

/** Create a token; returns the row and the token text (shown once), or undefined when the name is taken. */
export function createToken(db: GithostDb, uid: number, name: string, scopes: string[]): { row: TokenRow; token: string } | undefined {
  const token = newToken();
  const row = db.insertToken({ uid, name, token_hash: hashToken(token), token_last_eight: token.slice(-8), scopes: scopes.join(',') });
  return row ? { row, token } : undefined;
}
