import type { ErrorCode } from './codes.js';
import { exitCodeOf, httpStatusOf, type ErrorKind } from './kinds.js';

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

  constructor(code: ErrorCode, kind: ErrorKind, message: string, opts: { detail?: ErrorDetail; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StraitError';
    this.code = code;
    this.kind = kind;
    this.detail = opts.detail ?? {};
  }

  /** what the CLI (or a daemon) exits with when this error ends it */
  get exitCode(): number {
    return exitCodeOf(this.kind);
  }

  /** the status strait's HTTP APIs answer with */
  get httpStatus(): number {
    return httpStatusOf(this.kind);
  }

  toJSON(): { code: ErrorCode; message: string; detail: ErrorDetail } {
    return { code: this.code, message: this.message, detail: this.detail };
  }
}

/** Is `err` a StraitError (with this code)? The code is checked by the compiler: a typo does not build. */
export function isStraitError<C extends ErrorCode>(err: unknown, code?: C): err is StraitError & { readonly code: C } {
  return err instanceof StraitError && (code === undefined || err.code === code);
}
