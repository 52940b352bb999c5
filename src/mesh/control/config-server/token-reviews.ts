// What the mesh configuration service spends on a token it has not seen: one TokenReview
// (a request to the Kubernetes API server). Anyone who reaches the port can send a random
// token with each request, so the reviews are bounded here:
//   - answers (a caller, or "not valid") are kept for `ttlMs` in a table of at most
//     `cacheSize` tokens (by SHA-256; the oldest answer is dropped first, never the whole
//     table), so the same token costs one review a minute;
//   - a token not in the table costs one token of its source address's bucket (`burst`,
//     refilled one every `refillMs`) and one of a bucket shared by every source (`globalBurst`,
//     one every `globalRefillMs`); an empty bucket is answered 429 without a review;
//   - at most `maxSources` buckets are kept (the one idle longest goes first).
// A review that fails (the API server did not answer) is not kept: the next request asks again.
import { createHash } from 'node:crypto';

export interface TokenReviewLimits {
  ttlMs: number;
  cacheSize: number;
  burst: number;
  refillMs: number;
  globalBurst: number;
  globalRefillMs: number;
  maxSources: number;
}

export const DEFAULT_TOKEN_REVIEW_LIMITS: Readonly<TokenReviewLimits> = Object.freeze({
  ttlMs: 60_000,
  cacheSize: 10_000,
  burst: 10,
  refillMs: 2_000,
  globalBurst: 100,
  globalRefillMs: 20,
  maxSources: 10_000,
});

export const THROTTLED = Symbol('throttled');

interface Bucket {
  tokens: number;
  at: number;
}

function take(b: Bucket, burst: number, refillMs: number, now: number): boolean {
  const refilled = Math.min(burst, b.tokens + (now - b.at) / refillMs);
  b.at = now;
  if (refilled < 1) {
    b.tokens = refilled;
    return false;
  }
  b.tokens = refilled - 1;
  return true;
}

/** `review` bounded: its answers cached, its calls limited per source and in all. */
export function boundedReviews<T>(
  review: (token: string) => Promise<T | undefined>,
  limits: Partial<TokenReviewLimits> = {},
  now: () => number = Date.now,
): (token: string, source: string) => Promise<T | undefined | typeof THROTTLED> {
  const l = { ...DEFAULT_TOKEN_REVIEW_LIMITS, ...limits };
  const answers = new Map<string, { caller: T | undefined; until: number }>();
  const sources = new Map<string, Bucket>();
  const all: Bucket = { tokens: l.globalBurst, at: now() };
  return async (token, rawSource) => {
    const key = createHash('sha256').update(token).digest('base64url');
    const t = now();
    const hit = answers.get(key);
    if (hit && hit.until > t) return hit.caller;
    if (hit) answers.delete(key);
    const source = rawSource.replace(/^::ffff:/, '');
    let b = sources.get(source);
    if (b)
      sources.delete(source); // re-inserted below: the map's order is the order of last use
    else b = { tokens: l.burst, at: t };
    sources.set(source, b);
    while (sources.size > l.maxSources) sources.delete(sources.keys().next().value as string);
    if (!take(b, l.burst, l.refillMs, t)) return THROTTLED;
    if (!take(all, l.globalBurst, l.globalRefillMs, t)) return THROTTLED;
    const caller = await review(token);
    answers.set(key, { caller, until: now() + l.ttlMs });
    while (answers.size > l.cacheSize) answers.delete(answers.keys().next().value as string);
    return caller;
  };
}
