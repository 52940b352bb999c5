// The one HTTP error class of strait's servers: a status from a closed list, a message,
// and (for a request body the server could not use) what was wrong with it. Each server
// keeps its own error body shape (Gitea's {message, url}, Argo CD's {error, code, message},
// the store API's {code, message, detail}); the status comes from here.
import { isStraitError, type StraitError } from '../../base/errors/index.js';

/** The statuses strait's servers answer errors with. */
export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 410 | 413 | 422 | 429 | 500 | 503;

/** What was wrong with a request body: the server may answer each in its own words. */
export type BodyProblem = 'too-large' | 'timeout' | 'aborted' | 'malformed' | 'too-deep' | 'not-object';

export class HttpError extends Error {
  constructor(readonly status: HttpStatus, message: string, readonly problem?: BodyProblem) {
    super(message);
    this.name = 'HttpError';
  }
}

/** A StraitError's HTTP status: the one its kind has in the kind table (docs/errors.md). */
export function httpStatusOf(err: StraitError): HttpStatus {
  return err.httpStatus as HttpStatus;
}

/** An HttpError as is, a StraitError with its status from the table, anything else a 500. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isStraitError(err)) return new HttpError(httpStatusOf(err), err.message);
  return new HttpError(500, String((err as Error)?.message ?? err));
}
