// The admin account: Secret argocd-secret (name from the product word) in the
// controller's namespace, field admin.password = base64(password), generated at
// first start; server.secretkey signs session tokens (HS256 JWTs, 24 h).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { GROUPS, Kinds } from '../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../platform/store/index.js';

export const ADMIN_SECRET = `${GROUPS.gitopsWord}-secret`;
export const ADMIN_USER = 'admin';

type Secret = KubeObject & { data?: Record<string, string>; type?: string };

export interface AdminAccount {
  password: string;
  secretKey: Buffer;
}

const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');

/** Read the admin Secret, creating it (random password and signing key) when missing. */
export async function ensureAdminSecret(store: ResourceStore, namespace: string, opts: { initialPasswordFile?: string } = {}): Promise<AdminAccount> {
  const existing = await store.get<Secret>(Kinds.Secret, ADMIN_SECRET, namespace);
  const data = { ...(existing?.data ?? {}) };
  let changed = false;
  if (!data['admin.password']) {
    const generated = randomBytes(12).toString('base64url');
    data['admin.password'] = b64(generated);
    changed = true;
    // for a controller whose store only it can open: the first password, readable by its owner only
    if (opts.initialPasswordFile) writeFileSync(opts.initialPasswordFile, `${generated}\n`, { mode: 0o600 });
  }
  if (!data['server.secretkey']) {
    data['server.secretkey'] = b64(randomBytes(32));
    changed = true;
  }
  if (changed) {
    await store.apply<Secret>(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name: ADMIN_SECRET, namespace, labels: { 'app.kubernetes.io/part-of': GROUPS.gitopsWord } },
        data,
      },
      { fieldManager: 'strait-gitops' },
    );
  }
  return {
    password: Buffer.from(data['admin.password'] as string, 'base64').toString('utf8'),
    secretKey: Buffer.from(data['server.secretkey'] as string, 'base64'),
  };
}

export function passwordMatches(account: AdminAccount, username: string, password: string): boolean {
  if (username !== ADMIN_USER) return false;
  const a = Buffer.from(password);
  const b = Buffer.from(account.password);
  return a.length === b.length && timingSafeEqual(a, b);
}

const enc = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');

export function issueToken(account: AdminAccount, username: string, now = Date.now(), ttlMs = 24 * 3600 * 1000): string {
  const head = enc({ alg: 'HS256', typ: 'JWT' });
  const body = enc({ iss: 'strait', sub: username, iat: Math.floor(now / 1000), exp: Math.floor((now + ttlMs) / 1000), jti: randomBytes(8).toString('hex') });
  const sig = createHmac('sha256', account.secretKey).update(`${head}.${body}`).digest('base64url');
  return `${head}.${body}.${sig}`;
}

/** The user a token names, or undefined when it is forged or expired. */
export function checkToken(account: AdminAccount, token: string, now = Date.now()): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const want = createHmac('sha256', account.secretKey).update(`${parts[0]}.${parts[1]}`).digest();
  const got = Buffer.from(parts[2] ?? '', 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  try {
    const body = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString()) as { sub?: string; exp?: number };
    if (typeof body.exp !== 'number' || body.exp * 1000 < now) return undefined;
    return body.sub;
  } catch {
    return undefined;
  }
}
