// Request bodies and responses of the Gitea-compatible API, on the platform HTTP kit:
// error body {"message", "url"} as Gitea sends it, JSON bodies Gitea's binding refuses
// with 422 "[]: DeserializationError: ...".
import { E } from '../../base/errors/index.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, readJsonBody as readJson, sendError as sendErrorAnswer, sendJson as sendJsonAs } from '../../platform/http/index.js';

export { HttpError };

const GITEA_JSON = 'application/json;charset=utf-8';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonAs(res, status, body, GITEA_JSON);
}

export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  swaggerURL: string,
  headers?: Record<string, string>,
  code?: string,
): void {
  sendErrorAnswer(req, res, {
    status,
    body: { message, url: swaggerURL },
    contentType: GITEA_JSON,
    ...(headers ? { headers } : {}),
    ...(code ? { code } : {}),
  });
}

/** Read a JSON object body of at most `limit` bytes within `timeoutMs`. Gitea answers 422 for bodies that do not bind. */
export async function readJsonBody(req: IncomingMessage, limit: number, timeoutMs: number): Promise<Record<string, unknown>> {
  try {
    return await readJson(req, { limit, timeoutMs, emptyIsObject: true });
  } catch (e) {
    if (e instanceof HttpError && e.status === 400 && e.problem !== 'aborted')
      throw new HttpError(E.githostFieldInvalid, `[]: DeserializationError: ${e.message}`, e.problem);
    throw e;
  }
}

/** Field readers that answer like Gitea's binding: "[FieldName]: Required" and type errors as 422. */
export class Fields {
  constructor(private readonly body: Record<string, unknown>) {}

  private bad(field: string, rule: string): HttpError {
    return new HttpError(E.githostFieldInvalid, `[${field}]: ${rule}`);
  }

  string(key: string, field: string, opts: { required?: boolean; max?: number } = {}): string {
    const v = this.body[key];
    if (v === undefined || v === null || v === '') {
      if (opts.required) throw this.bad(field, 'Required');
      return '';
    }
    if (typeof v !== 'string') throw this.bad(field, `DeserializationError: must be a string, got ${Array.isArray(v) ? 'array' : typeof v}`);
    if (opts.max !== undefined && v.length > opts.max) throw this.bad(field, `MaxSize: must have at most ${opts.max} characters`);
    return v;
  }

  bool(key: string, field: string, dflt = false): boolean {
    const v = this.body[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'boolean') throw this.bad(field, `DeserializationError: must be a boolean, got ${typeof v}`);
    return v;
  }

  int(key: string, field: string): number | undefined {
    const v = this.body[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw this.bad(field, `DeserializationError: must be an integer, got ${JSON.stringify(v)}`);
    return v;
  }

  stringList(key: string, field: string): string[] {
    const v = this.body[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw this.bad(field, 'DeserializationError: must be a list of strings');
    return v as string[];
  }
}
