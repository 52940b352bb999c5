// The webhook's HTTPS server: POST /inject with an AdmissionReview. The API server only
// calls webhooks over TLS; the caller passes the serving certificate and key (PEM).
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isStraitError } from '../../../base/errors/index.js';
import type { SidecarOptions } from './patch.js';
import { reviewAdmission } from './review.js';
import { startListening } from '../../../base/net/index.js';

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
  const server = createServer({ cert: opts.cert, key: opts.key, minVersion: 'TLSv1.2' }, (req, res) => {
    const reply = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/inject') {
      reply(404, { message: 'POST /inject with an AdmissionReview' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) { reply(413, { message: 'AdmissionReview too large' }); req.destroy(); return; }
      chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      try {
        const out = reviewAdmission(JSON.parse(Buffer.concat(chunks).toString('utf8')), opts);
        opts.onReview?.(out.response.patch ? 'injected' : 'skipped');
        reply(200, out);
      } catch (e) {
        opts.onReview?.('rejected');
        reply(400, { message: isStraitError(e) ? e.message : `not JSON: ${(e as Error).message}` });
      }
    });
  });
  const addr = await startListening(server, { port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' }) as AddressInfo;
  return {
    port: addr.port,
    server,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
