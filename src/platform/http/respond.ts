// Writing answers: JSON with its length, and errors in each server's own body shape.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

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
  if (!req.complete) res.setHeader('connection', 'close');
  for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
  sendJson(res, answer.status, answer.body, answer.contentType);
}

/** A request listener around an async handler: whatever it throws is answered by `answer`. */
export function handleWith(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  answer: (err: unknown) => ErrorAnswer): RequestListener {
  return (req, res) => {
    handle(req, res).catch((err: unknown) => sendError(req, res, answer(err)));
  };
}
