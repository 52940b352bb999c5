// The one retry policy of strait: wait `initialMs` after the first failure, twice as long
// after each further one, never more than `maxMs`; a success starts over. No jitter: each
// retrier talks to its own peer (a local store, its own child process, one configuration
// service), and tests reason about the delays. It lives in base/ so that every layer uses
// it: the data-plane proxy's configuration client as well as the controllers
// (src/platform/controller re-exports it), the process supervisor and the store watches.

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** The delay before retry number `attempt` (1 = after the first failure). */
export function backoffDelay(attempt: number, policy: BackoffPolicy): number {
  const n = Math.max(1, Math.min(attempt, 32));
  return Math.min(policy.maxMs, policy.initialMs * 2 ** (n - 1));
}

/** The failures of one retrier since its last success, and the delay each one earns. */
export class Backoff {
  private count = 0;
  constructor(readonly policy: BackoffPolicy) {}

  /** Count a failure; the delay before the retry it calls for. */
  fail(): number {
    this.count++;
    return backoffDelay(this.count, this.policy);
  }

  /** A success: the next failure waits `initialMs` again. */
  reset(): void {
    this.count = 0;
  }

  /** failures since the last success */
  get failures(): number {
    return this.count;
  }
}
