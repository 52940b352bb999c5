// Retrying a step of the Kubernetes-mode mesh (a caBundle patch, reading the observations)
// until it succeeds or the control module stops; a failure is logged once per kind.
import type { Logger } from 'pino';
import { isStraitError } from '../../../base/errors/index.js';

// the abort listener goes with its timer: one left behind per retry piled up on the signal
// (MaxListenersExceededWarning after 11 retries)
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((r) => {
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      r();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** Retry `step` until it returns true or the signal aborts. */
export async function until(what: string, step: () => Promise<boolean>, ms: number, signal: AbortSignal, log: Logger): Promise<void> {
  let last = '';
  while (!signal.aborted) {
    try {
      if (await step()) return;
    } catch (err) {
      const text = isStraitError(err) ? err.code : String(err);
      if (text !== last) log.warn({ err: isStraitError(err) ? err.message : String(err) }, `${what}: retrying`);
      last = text;
    }
    await sleep(ms, signal);
  }
}
