// The controllers' defaults of the one retry policy (src/base/backoff, where every layer
// can use it: the data plane may not import platform/controller).
import { backoffDelay as delay, type BackoffPolicy } from '../../base/backoff/index.js';

export { Backoff, type BackoffPolicy } from '../../base/backoff/index.js';

/** Re-list after a watch ended, retry a failed reconcile: 100 ms, 200 ms, ... 2 s. */
export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 100, maxMs: 2000 });

/** The delay before retry number `attempt` (1 = after the first failure). */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  return delay(attempt, policy);
}
