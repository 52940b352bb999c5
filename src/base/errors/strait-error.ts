export type ErrorDetail = Record<string, unknown>;

/**
 * Every error strait raises on purpose. `code` is stable and documented in
 * docs/errors.md; `message` says what was wrong (quoting the offending value) and
 * what to do; `exitCode` is what the CLI exits with when this error ends a command.
 */
export class StraitError extends Error {
  readonly code: string;
  readonly detail: ErrorDetail;
  readonly exitCode: number;

  constructor(code: string, message: string, opts: { detail?: ErrorDetail; cause?: unknown; exitCode?: number } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StraitError';
    this.code = code;
    this.detail = opts.detail ?? {};
    this.exitCode = opts.exitCode ?? 1;
  }

  toJSON(): { code: string; message: string; detail: ErrorDetail } {
    return { code: this.code, message: this.message, detail: this.detail };
  }
}

export function isStraitError(err: unknown, code?: string): err is StraitError {
  return err instanceof StraitError && (code === undefined || err.code === code);
}
