// def(): one factory per condition, with its stable code and its kind.
import type { ErrorCode } from './codes.js';
import type { ErrorKind } from './kinds.js';
import { StraitError, type ErrorDetail } from './strait-error.js';

/** Quote a user-supplied value for a message: JSON quoting, shortened if long. */
export function q(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return s.length > 200 ? `${s.slice(0, 197)}...` : s;
}

/** A factory (`E.notFound('Pod', 'web')`) that also names its code and kind. */
export interface ErrorDefinition<C extends string, A extends unknown[]> {
  (...args: A): StraitError;
  readonly code: C;
  readonly kind: ErrorKind;
  /** the status githost's Gitea-compatible API answers with where Gitea's differs from the kind's */
  readonly giteaStatus: number | undefined;
  /** the HTTP status every server answers with where the protocol has a closer one than the kind's (405, 408, 413, 429) */
  readonly httpStatus: number | undefined;
}

export interface DefinitionOptions {
  giteaStatus?: number;
  httpStatus?: number;
}

export function def<const C extends `STRAIT_ERR_${string}`, A extends unknown[]>(
  code: C,
  kind: ErrorKind,
  build: (...args: A) => { message: string; detail?: ErrorDetail },
  opts: DefinitionOptions = {},
): ErrorDefinition<C, A> {
  const factory = (...args: A): StraitError => {
    const { message, detail } = build(...args);
    // every definition is part of E, so its code is an ErrorCode (the union is derived from E)
    return new StraitError(code as string as ErrorCode, kind, message, {
      detail: detail ?? {},
      ...(opts.httpStatus === undefined ? {} : { httpStatus: opts.httpStatus }),
    });
  };
  return Object.assign(factory, { code, kind, giteaStatus: opts.giteaStatus, httpStatus: opts.httpStatus });
}

/** The build of a definition whose message is made where the error is found (an HTTP server's answer in its clients' words). */
export function said(message: string): { message: string } {
  return { message };
}
