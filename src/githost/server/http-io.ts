// Request bodies and responses of the Gitea-compatible API: bounded JSON bodies,
// error body {"message", "url"} as Gitea sends it.
import type { IncomingMessage, ServerResponse } from 'node:http';

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json;charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string, swaggerURL: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { message, url: swaggerURL });
}

/** Read a JSON object body of at most `limit` bytes. Gitea answers 422 for bodies that do not bind. */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(new ApiError(413, `request body is ${declared} bytes, more than the limit of ${limit}`));
      return;
    }
    const chunks: Buffer[] = [];
    let len = 0;
    let failed = false;
    req.on('data', (d: Buffer) => {
      if (failed) return;
      len += d.length;
      if (len > limit) {
        failed = true;
        reject(new ApiError(413, `request body is more than the limit of ${limit} bytes`));
        return;
      }
      chunks.push(d);
    });
    req.on('error', (e) => {
      if (!failed) reject(new ApiError(400, `reading the request body failed: ${e.message}`));
      failed = true;
    });
    req.on('end', () => {
      if (failed) return;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') {
        resolve({});
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        reject(new ApiError(422, `[]: DeserializationError: ${(e as Error).message}`));
        return;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        reject(new ApiError(422, '[]: DeserializationError: the body must be a JSON object'));
        return;
      }
      resolve(parsed as Record<string, unknown>);
    });
  });
}

/** Field readers that answer like Gitea's binding: "[FieldName]: Required" and type errors as 422. */
export class Fields {
  constructor(private readonly body: Record<string, unknown>) {}

  private bad(field: string, rule: string): ApiError {
    return new ApiError(422, `[${field}]: ${rule}`);
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
