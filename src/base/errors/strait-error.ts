import type { ErrorCode } from './codes.js';
import { KINDS, exitCodeOf, type ErrorKind } from './kinds.js';

export type ErrorDetail = Record<string, unknown>;

/**
 * Every error strait raises on purpose. `code` is stable and documented in
 * docs/errors.md; `message` says what was wrong (quoting the offending value) and
 * what to do; `kind` classifies it: the CLI's exit status (`exitCode`) and the HTTP
 * status (`httpStatus`) come from the kind table in kinds.ts.
 */
export class StraitError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly detail: ErrorDetail;
  /** the definition's protocol status (405, 408, 413, 429) where it has one; undefined: the kind's */
  readonly httpStatusOverride: number | undefined;

  constructor(code: ErrorCode, kind: ErrorKind, message: string, opts: { detail?: ErrorDetail; cause?: unknown; httpStatus?: number | undefined } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StraitError';
    this.code = code;
    this.kind = kind;
    this.detail = opts.detail ?? {};
    this.httpStatusOverride = opts.httpStatus;
  }

  /** what the CLI (or a daemon) exits with when this error ends it */
  get exitCode(): number {
    return exitCodeOf(this.kind);
  }

  /** the status strait's HTTP APIs answer with: the kind's, or the definition's protocol status */
  get httpStatus(): number {
    return httpStatusOf(this);
  }

  toJSON(): { code: ErrorCode; message: string; detail: ErrorDetail } {
    return { code: this.code, message: this.message, detail: this.detail };
  }
}

/** Is `err` a StraitError (with this code)? The code is checked by the compiler: a typo does not build. */
export function isStraitError<C extends ErrorCode>(err: unknown, code?: C): err is StraitError & { readonly code: C } {
  return err instanceof StraitError && (code === undefined || err.code === code);
}

/**
 * The one HTTP status function: a StraitError's (or a definition's) protocol status where
 * it has one (405, 408, 413, 429), otherwise its kind's in the kind table (docs/errors.md).
 */
export function httpStatusOf(err: { readonly kind: ErrorKind; readonly httpStatusOverride?: number | undefined }): number {
  return err.httpStatusOverride ?? KINDS[err.kind].http;
}
