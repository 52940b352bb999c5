// The store API's wire shape, shared by server and client. HTTP/1.1 over a unix socket;
// every request carries "Authorization: Bearer <token>". Paths (cluster = store name):
//   GET    /v1/clusters                                   -> { clusters: string[] }
//   GET    /v1/clusters/:c/object?apiVersion&kind&name&namespace  -> { object: obj | null }
//   GET    /v1/clusters/:c/list?apiVersion&kind&namespace&labelSelector -> { items, resourceVersion }
//   GET    /v1/clusters/:c/watch?apiVersion&kind&namespace&labelSelector&resourceVersion
//            -> 200, newline-delimited JSON: {"type":"ADDED|MODIFIED|DELETED","object":…}
//               or {"type":"ERROR","error":{code,message,detail}} as the last line
//   POST   /v1/clusters/:c/apply?dryRun=1&fieldManager=…  body: object -> object
//   PUT    /v1/clusters/:c/update                          body: object -> object
//   PUT    /v1/clusters/:c/status                          body: object -> object
//   DELETE /v1/clusters/:c/object?apiVersion&kind&name&namespace -> { deleted: boolean }
//   POST   /v1/clusters/:c/events                          body: CoreEvent -> {}
//   GET    /v1/stream?watch=CLUSTER,APIVERSION,KIND[,NAMESPACE]&watch=…
//            -> list-then-watch of several kinds on one connection (stream.ts);
//               newline-delimited JSON, or server-sent events with "Accept: text/event-stream"
// Errors: the HTTP status of the error's kind (docs/errors.md, via platform/http's httpStatusOf)
// and body {code, message, detail}; the client rethrows the same StraitError.
import { E, StraitError, definitionOf, isStraitError } from '../../../base/errors/index.js';

export const API_PREFIX = '/v1/clusters';
export const STREAM_PATH = '/v1/stream';
/** largest request body the server reads */
export const MAX_BODY = 16 * 1024 * 1024;
/** a watch whose client lags this far behind is ended with STRAIT_ERR_WATCH_EXPIRED */
export const MAX_WATCH_BACKLOG = 32 * 1024 * 1024;

export interface WireError {
  code: string;
  message: string;
  detail: Record<string, unknown>;
}

export function toWireError(err: unknown): WireError {
  if (isStraitError(err)) return err.toJSON();
  return E.internal((err as Error)?.message ?? String(err)).toJSON();
}

/** The StraitError a wire error stands for; a code this build does not have is an internal error. */
export function fromWireError(w: WireError): StraitError {
  const def = definitionOf(w.code);
  if (!def) return E.internal(`the store API answered with unknown code ${JSON.stringify(w.code)}: ${w.message}`);
  return new StraitError(def.code, def.kind, w.message, { detail: w.detail ?? {} });
}

export function isWireError(v: unknown): v is WireError {
  return typeof v === 'object' && v !== null && typeof (v as WireError).code === 'string' && typeof (v as WireError).message === 'string';
}
