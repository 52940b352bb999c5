// The HTTP kit of strait's servers: one error class with a typed status and a stable code
// (statuses from src/base/errors' one table), bounded body reading, JSON answers, request targets.
// Each server keeps its own error body shape; the reading, limits and statuses are here.
export { HttpError, STRAIT_ERROR_HEADER, httpStatusOf, toHttpError, type BodyProblem, type ErrorClass, type HttpStatus } from './http-error.js';
export {
  BODY_TIMEOUT_MS,
  MAX_JSON_DEPTH,
  exceedsDepth,
  guardBodyStream,
  parseJsonObject,
  readBody,
  readJsonBody,
  type JsonBodyLimits,
} from './read-body.js';
export { handleWith, sendError, sendJson, type ErrorAnswer } from './respond.js';
export { decodeComponent, pathSegments, requestTarget, type RequestTarget } from './request-target.js';
export { SAFE_METHODS, browserWriteRefusal, carriesCookie, servingOrigin, type BrowserWriteRequest } from './browser-writes.js';
