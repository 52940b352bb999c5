// Failed logins to the control API, limited as Argo CD's session manager does:
// after `maxFailures` failed logins within `windowSeconds` (counted per user name and,
// beyond Argo CD, per client address), further attempts are refused without checking
// the password, with the same answer as a wrong password ("Invalid username or
// password"), until the window has passed since the last failure. A success clears
// the user's and the address's count. The table is bounded (`maxEntries`); when full,
// the entry failed longest ago is dropped, never the admin's.
// Argo CD's environment variables set the limits: ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT
// (default 5), ARGOCD_SESSION_FAILURE_WINDOW_SECONDS (default 300; 0 = failures never
// expire) and ARGOCD_SESSION_MAX_CACHE_SIZE (default 10000).
import { E } from '../../base/errors/index.js';
import { ADMIN_USER } from './admin.js';

export interface LoginLimits {
  maxFailures: number;
  windowSeconds: number;
  maxEntries: number;
}

export const DEFAULT_LOGIN_LIMITS: Readonly<LoginLimits> = Object.freeze({ maxFailures: 5, windowSeconds: 300, maxEntries: 10_000 });

const ENV: Record<keyof LoginLimits, { name: string; min: number }> = {
  maxFailures: { name: 'ARGOCD_SESSION_FAILURE_MAX_FAIL_COUNT', min: 1 },
  windowSeconds: { name: 'ARGOCD_SESSION_FAILURE_WINDOW_SECONDS', min: 0 },
  maxEntries: { name: 'ARGOCD_SESSION_MAX_CACHE_SIZE', min: 1 },
};

/** The limits from Argo CD's environment variables; a value that is not an integer in range is refused. */
export function loginLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): LoginLimits {
  const out: LoginLimits = { ...DEFAULT_LOGIN_LIMITS };
  for (const key of Object.keys(ENV) as (keyof LoginLimits)[]) {
    const { name, min } = ENV[key];
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min) throw E.configInvalid(name, raw, `must be an integer >= ${min}`);
    out[key] = n;
  }
  return out;
}

interface Failures {
  count: number;
  last: number;
}

export class LoginLimiter {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly limits: Readonly<LoginLimits> = DEFAULT_LOGIN_LIMITS) {}

  private inWindow(f: Failures, now: number): boolean {
    return this.limits.windowSeconds === 0 || now - f.last <= this.limits.windowSeconds * 1000;
  }

  /** True when this user name or this client address has failed too often lately. */
  blocked(username: string, addr: string, now = Date.now()): boolean {
    return [`user:${username}`, `addr:${addr}`].some((k) => {
      const f = this.failures.get(k);
      return f !== undefined && f.count >= this.limits.maxFailures && this.inWindow(f, now);
    });
  }

  fail(username: string, addr: string, now = Date.now()): void {
    this.expire(now);
    for (const k of [`user:${username}`, `addr:${addr}`]) {
      const f = this.failures.get(k);
      if (f && this.inWindow(f, now)) {
        f.count++;
        f.last = now;
        continue;
      }
      if (!f && this.failures.size >= this.limits.maxEntries) this.evict(username);
      this.failures.set(k, { count: 1, last: now });
    }
  }

  succeed(username: string, addr: string): void {
    this.failures.delete(`user:${username}`);
    this.failures.delete(`addr:${addr}`);
  }

  private expire(now: number): void {
    if (this.limits.windowSeconds === 0) return;
    for (const [k, f] of this.failures) if (!this.inWindow(f, now)) this.failures.delete(k);
  }

  private evict(username: string): void {
    let oldest: [string, number] | undefined;
    for (const [k, f] of this.failures) {
      if (k === `user:${ADMIN_USER}` || k === `user:${username}`) continue;
      if (!oldest || f.last < oldest[1]) oldest = [k, f.last];
    }
    if (oldest) this.failures.delete(oldest[0]);
  }
}
