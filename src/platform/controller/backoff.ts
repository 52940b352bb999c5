// The one retry policy of strait's controllers: wait `initialMs` after the first failure,
// twice as long after each further one, never more than `maxMs`; a success starts over.
// No jitter: one process's controllers retry against their own local store, and tests
// reason about the delays.

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** Re-list after a watch ended, retry a failed reconcile: 100 ms, 200 ms, ... 2 s. */
export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 100, maxMs: 2000 });

/** The delay before retry number `attempt` (1 = after the first failure). */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const n = Math.max(1, Math.min(attempt, 32));
  return Math.min(policy.maxMs, policy.initialMs * 2 ** (n - 1));
}
