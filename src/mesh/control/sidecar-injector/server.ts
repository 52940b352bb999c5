// The webhook's HTTPS server: POST /inject with an AdmissionReview. The API server only
// calls webhooks over TLS; the caller passes the serving certificate and key (PEM).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { E, isStraitError } from '../../../base/errors/index.js';
import { listenServer } from '../../../base/net/index.js';
import { HttpError, handleWith, readJsonBody, requestTarget, sendJson, toHttpError } from '../../../platform/http/index.js';
import type { SidecarOptions } from './patch.js';
import { reviewAdmission } from './review.js';

export interface SidecarInjectorOptions extends SidecarOptions {
  /** PEM serving certificate (chain) and key */
  cert: string | Buffer;
  key: string | Buffer;
  host?: string;
  /** 0 = any free port */
  port?: number;
  /** counted per outcome, for metrics */
  onReview?: (outcome: 'injected' | 'skipped' | 'rejected') => void;
}

export interface SidecarInjector {
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;

export async function serveSidecarInjector(opts: SidecarInjectorOptions): Promise<SidecarInjector> {
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || requestTarget(req).path !== '/inject') throw new HttpError(E.httpNoRoute, 'POST /inject with an AdmissionReview');
    let out: ReturnType<typeof reviewAdmission>;
    try {
      out = reviewAdmission(await readJsonBody(req, { limit: MAX_BODY }), opts);
    } catch (e) {
      opts.onReview?.('rejected');
      throw e;
    }
    opts.onReview?.(out.response.patch ? 'injected' : 'skipped');
    sendJson(res, 200, out);
  };
  // errors as {message}; a StraitError from the review is the caller's bad AdmissionReview
  const server = createServer(
    { cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' },
    handleWith(handle, (err) => {
      const e = isStraitError(err) && !(err instanceof HttpError) ? new HttpError({ code: err.code, kind: 'usage' }, err.message) : toHttpError(err);
      return { status: e.status, body: { message: e.message }, code: e.code };
    }),
  );
  const bound = await listenServer(server, { port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  return { port: bound.port, server, close: () => bound.close() };
}
