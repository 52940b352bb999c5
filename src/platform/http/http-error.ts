// The one HTTP error class of strait's servers: a status from a closed list, a message,
// and (for a request body the server could not use) what was wrong with it. Each server
// keeps its own error body shape (Gitea's {message, url}, Argo CD's {error, code, message},
// the store API's {code, message, detail}); the status comes from here.
import { isStraitError, type StraitError } from '../../base/errors/index.js';

/** The statuses strait's servers answer errors with. */
export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 410 | 413 | 422 | 500 | 503;

/** What was wrong with a request body: the server may answer each in its own words. */
export type BodyProblem = 'too-large' | 'timeout' | 'aborted' | 'malformed' | 'too-deep' | 'not-object';

export class HttpError extends Error {
  constructor(readonly status: HttpStatus, message: string, readonly problem?: BodyProblem) {
    super(message);
    this.name = 'HttpError';
  }
}

// The one table from a StraitError to an HTTP status: a few codes by name, the rest by
// the class of their exit code (2 usage, 3 not found, 4 conflict, 5 unavailable, 6 denied).
const BY_CODE: Readonly<Record<string, HttpStatus>> = {
  STRAIT_ERR_WATCH_EXPIRED: 410,
};
const BY_EXIT: Readonly<Record<number, HttpStatus>> = { 2: 400, 3: 404, 4: 409, 5: 503, 6: 401 };

export function httpStatusOf(err: StraitError): HttpStatus {
  return BY_CODE[err.code] ?? BY_EXIT[err.exitCode] ?? 500;
}

/** An HttpError as is, a StraitError with its status from the table, anything else a 500. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isStraitError(err)) return new HttpError(httpStatusOf(err), err.message);
  return new HttpError(500, String((err as Error)?.message ?? err));
}
