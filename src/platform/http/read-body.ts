// Reading request bodies the same way in every server: a size limit (checked against
// Content-Length first, then while reading), a time limit, and for JSON a nesting limit
// checked before parsing, so a 10,000-deep body is a 400 and never a stack overflow
// further on. A body the server gives up on is drained, not stored; the answer to it
// closes the connection (see sendError).
import { E } from '../../base/errors/index.js';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/** The whole of a JSON body must arrive within this long (a trickling client is cut off). */
export const BODY_TIMEOUT_MS = 30_000;
/**
 * Deepest nesting of arrays and objects in a JSON body. Kubernetes-shaped objects nest
 * a few dozen levels at most (a CRD schema: properties/x/properties/y/... two levels a
 * field); 128 leaves room for those and stays far below what recursive code can walk.
 */
export const MAX_JSON_DEPTH = 128;

export interface JsonBodyLimits {
  /** largest body in bytes */
  limit: number;
  /** milliseconds the whole body may take to arrive; default BODY_TIMEOUT_MS */
  timeoutMs?: number;
  /** deepest nesting of arrays and objects; default MAX_JSON_DEPTH */
  maxDepth?: number;
  /** an empty (or blank) body reads as {} instead of a 400 */
  emptyIsObject?: boolean;
}

/** Read a request body of JSON that must be an object. Errors are HttpErrors with a `problem`. */
export function readJsonBody(req: IncomingMessage, limits: JsonBodyLimits): Promise<Record<string, unknown>> {
  return readBody(req, limits.limit, limits.timeoutMs ?? BODY_TIMEOUT_MS).then((buf) =>
    parseJsonObject(buf.toString('utf8'), limits.maxDepth ?? MAX_JSON_DEPTH, limits.emptyIsObject ?? false),
  );
}

/** Read a whole request body of at most `limit` bytes within `timeoutMs`. */
export function readBody(req: IncomingMessage, limit: number, timeoutMs = BODY_TIMEOUT_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new HttpError(E.httpBodyTooLarge, `request body is ${declared} bytes, more than the limit of ${limit}`, 'too-large'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (e: HttpError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      chunks.length = 0;
      // keep reading and dropping what is left, so that the answer can still be sent
      req.off('data', onData);
      req.resume();
      reject(e);
    };
    const onData = (d: Buffer): void => {
      size += d.length;
      if (size > limit) fail(new HttpError(E.httpBodyTooLarge, `request body is more than the limit of ${limit} bytes`, 'too-large'));
      else chunks.push(d);
    };
    const timer = setTimeout(() => fail(new HttpError(E.httpBodyTimeout, `request body did not arrive within ${timeoutMs / 1000} s`, 'timeout')), timeoutMs);
    req.on('data', onData);
    req.on('error', (e) => fail(new HttpError(E.httpBodyAborted, `reading the request body failed: ${e.message}`, 'aborted')));
    req.on('close', () => {
      if (!req.complete) fail(new HttpError(E.httpBodyAborted, 'the client went away before the request body ended', 'aborted'));
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(Buffer.concat(chunks, size));
    });
  });
}

/** Parse JSON text that must be an object, refusing nesting deeper than `maxDepth` before parsing. */
export function parseJsonObject(text: string, maxDepth = MAX_JSON_DEPTH, emptyIsObject = false): Record<string, unknown> {
  if (text.trim() === '') {
    if (emptyIsObject) return {};
    throw new HttpError(E.httpBodyInvalid, 'request body is empty; a JSON object is needed', 'malformed');
  }
  if (exceedsDepth(text, maxDepth)) {
    throw new HttpError(E.httpBodyInvalid, `request body nests arrays and objects deeper than ${maxDepth} levels`, 'too-deep');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new HttpError(E.httpBodyInvalid, `request body is not valid JSON: ${(e as Error).message}`, 'malformed');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed;
    throw new HttpError(E.httpBodyInvalid, `request body must be a JSON object, got ${got}`, 'not-object');
  }
  return parsed as Record<string, unknown>;
}

/** Whether `[` and `{` outside strings nest deeper than `max` anywhere in `text` (one pass, no recursion). */
export function exceedsDepth(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * For a body streamed elsewhere (git's pack data): call `onStall` when no byte of it has
 * arrived for `idleMs` while it was being read. Time the reader spends paused (the
 * consumer is slow, not the client) does not count. Add it when the body starts flowing.
 */
export function guardBodyStream(req: IncomingMessage, idleMs: number, onStall: () => void): void {
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (req.complete || req.destroyed) return;
      if (req.isPaused()) arm();
      else onStall();
    }, idleMs);
  };
  const stop = (): void => clearTimeout(timer);
  req.on('data', arm);
  req.once('end', stop);
  req.once('close', stop);
  arm();
}
