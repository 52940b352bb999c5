// Writing answers: JSON with its length, and errors in each server's own body shape.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { STRAIT_ERROR_HEADER } from './http-error.js';

export function sendJson(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** An error as one server answers it: status, its own body shape, extra headers. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  contentType?: string;
  /** the error's STRAIT_ERR_* code, sent in the strait-error-code header (every body shape keeps its clients' fields) */
  code?: string;
}

/**
 * Answer an error. A request whose body was not read to its end gets "Connection: close"
 * (the rest of it would be parsed as the next request); once the headers are out only
 * dropping the connection can tell the client that the answer failed.
 */
export function sendError(req: IncomingMessage, res: ServerResponse, answer: ErrorAnswer): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // HTTP/1.1 only: HTTP/2 forbids connection headers, and a stream ends without its connection
  if (!req.complete && req.httpVersionMajor === 1) res.setHeader('connection', 'close');
  for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
  if (answer.code !== undefined) res.setHeader(STRAIT_ERROR_HEADER, answer.code);
  sendJson(res, answer.status, answer.body, answer.contentType);
}

/** A request listener around an async handler: whatever it throws is answered by `answer`. */
export function handleWith(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, answer: (err: unknown) => ErrorAnswer): RequestListener {
  return (req, res) => {
    handle(req, res).catch((err: unknown) => sendError(req, res, answer(err)));
  };
}
