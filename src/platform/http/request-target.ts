// The path and query of a request, and percent-decoding that answers 400, not 500, to
// bad encoding ("%E0%A4%A", a lone "%").
import { E } from '../../base/errors/index.js';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

export interface RequestTarget {
  /** the path as sent (still percent-encoded), without the query */
  path: string;
  query: URLSearchParams;
}

/** Split the request target into path and query; neither is decoded here. */
export function requestTarget(req: IncomingMessage): RequestTarget {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  return { path: q === -1 ? raw : raw.slice(0, q), query: new URLSearchParams(q === -1 ? '' : raw.slice(q + 1)) };
}

/** decodeURIComponent, with bad percent-encoding a 400 that quotes the offending text. */
export function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(E.httpTargetInvalid, `${JSON.stringify(text.slice(0, 200))} is not valid percent-encoding`);
  }
}

/** The decoded, non-empty segments of a path ("/a/%2e/b/" -> ["a", ".", "b"]). */
export function pathSegments(path: string): string[] {
  return path.split('/').filter(Boolean).map(decodeComponent);
}
