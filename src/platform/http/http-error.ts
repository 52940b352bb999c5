// The one HTTP error class of strait's servers: a StraitError (a stable code and a kind)
// whose status is the one src/base/errors gives it (its definition's protocol status, or
// its kind's), and, for a request body the server could not use, what was wrong with it.
// Each server keeps its own error body shape (Gitea's {message, url}, Argo CD's
// {error, code, message}, the store API's {code, message, detail}) and names the code in
// the STRAIT_ERROR_HEADER header; the status comes from here.
import { E, StraitError, httpStatusOf, isStraitError, type ErrorCode, type ErrorKind } from '../../base/errors/index.js';

/** The statuses strait's servers answer errors with. */
export type HttpStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 410 | 413 | 422 | 429 | 500 | 503;

/** What was wrong with a request body: the server may answer each in its own words. */
export type BodyProblem = 'too-large' | 'timeout' | 'aborted' | 'malformed' | 'too-deep' | 'not-object';

/** What classifies an HttpError: a definition of src/base/errors (`E.httpNoRoute`) or an error made from one. */
export interface ErrorClass {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly httpStatus?: number | undefined;
  readonly httpStatusOverride?: number | undefined;
}

/** The response header every server names an error's code in (the body keeps its clients' shape). */
export const STRAIT_ERROR_HEADER = 'strait-error-code';

export class HttpError extends StraitError {
  /** `new HttpError(E.httpNoRoute, 'no route for GET /x')`: the code and kind from the definition */
  constructor(
    of: ErrorClass,
    message: string,
    readonly problem?: BodyProblem,
  ) {
    // a definition (a factory function) names its protocol status `httpStatus`; an error, `httpStatusOverride`
    const override = of instanceof StraitError ? of.httpStatusOverride : of.httpStatus;
    super(of.code, of.kind, message, { httpStatus: override });
    this.name = 'HttpError';
  }

  get status(): HttpStatus {
    return httpStatusOf(this) as HttpStatus;
  }
}

export { httpStatusOf };

/** An HttpError as is, a StraitError with its code and status, anything else an internal error (500). */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (isStraitError(err)) return new HttpError(err, err.message);
  return new HttpError(E.internal, String((err as Error)?.message ?? err));
}
