// Passwords and access tokens. Passwords: PBKDF2-SHA256, 50,000 iterations, 50-byte
// key, 10-character salt, as Gitea's default "pbkdf2$50000$50". Tokens: 40 hex digits
// from 20 random bytes, shown once; only their SHA-256 is stored (a token carries
// 160 bits of entropy, so a fast hash is enough and keeps token auth cheap).
import { createHash, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';

export const PASSWORD_ALGO = 'pbkdf2$50000$50';
const ITERATIONS = 50_000;
const KEY_LEN = 50;
const SALT_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function randomSalt(length = 10): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += SALT_CHARS[b % SALT_CHARS.length];
  return out;
}

function derive(password: string, salt: string, iterations: number, keyLen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, keyLen, 'sha256', (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string, salt: string): Promise<string> {
  return (await derive(password, salt, ITERATIONS, KEY_LEN)).toString('hex');
}

export async function verifyPassword(password: string, salt: string, algo: string, hashHex: string): Promise<boolean> {
  const m = /^pbkdf2\$(\d+)\$(\d+)$/.exec(algo);
  if (!m) return false;
  const expected = Buffer.from(hashHex, 'hex');
  const got = await derive(password, salt, Number(m[1]), Number(m[2]));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

export function newToken(): string {
  return randomBytes(20).toString('hex');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
