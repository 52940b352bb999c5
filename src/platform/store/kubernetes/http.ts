// One HTTP(S) client for the API server: auth and TLS from @kubernetes/client-node's
// KubeConfig (tokens, client certificates, exec plugins, in-cluster), a keep-alive agent,
// JSON in and out, transport failures mapped to STRAIT_ERR_STORE_UNAVAILABLE.
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import type { KubeConfigLike } from '../../kube-preload/index.js';
import { E } from '../../../base/errors/index.js';

export interface KubeResponse {
  status: number;
  /** parsed JSON body (undefined when empty or not JSON) */
  body: unknown;
  /** the body as text when it is not JSON (a pod's metrics through the API server's proxy) */
  text?: string;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

/**
 * A new connection that is not made within this is given up (the request fails as
 * unavailable and its caller retries on a new one): a SYN that an API server's restart
 * swallowed is retransmitted with a doubling timeout (1, 2, 4, 8, 16 s), so without this a
 * watch or list begun during the outage waited up to the request's 30 s after the server
 * was back (measured in the real clusters: 29-38 s; docs/faults.md).
 */
export const CONNECT_TIMEOUT_MS = 3000;

function guardConnect(req: ClientRequest, sock: Socket): void {
  if (!sock.connecting) return;
  const t = setTimeout(() => {
    req.destroy(Object.assign(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }));
  }, CONNECT_TIMEOUT_MS);
  t.unref();
  const clear = (): void => clearTimeout(t);
  sock.once('connect', clear);
  sock.once('close', clear);
}

export class KubeHttp {
  readonly server: string;
  private readonly url: URL;
  private readonly agent: HttpAgent | HttpsAgent;
  private tls: RequestOptions | undefined;

  constructor(
    private readonly kc: KubeConfigLike,
    source: string,
    private readonly requestTimeoutMs = 30_000,
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw E.kubeconfigInvalid(source, `context ${JSON.stringify(kc.getCurrentContext())} names no cluster`);
    if (!kc.getCurrentUser()) throw E.kubeconfigInvalid(source, `context ${JSON.stringify(kc.getCurrentContext())} names no user`);
    this.server = cluster.server.replace(/\/+$/, '');
    try {
      this.url = new URL(this.server);
    } catch {
      throw E.kubeconfigInvalid(source, `cluster server ${JSON.stringify(cluster.server)} is not a URL`);
    }
    this.agent = this.url.protocol === 'http:' ? new HttpAgent({ keepAlive: true }) : new HttpsAgent({ keepAlive: true });
  }

  /** Headers and TLS options for one request (tokens may rotate, so asked every time). */
  private async options(): Promise<RequestOptions> {
    const opts: RequestOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    if (!this.tls) {
      this.tls = { ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername };
    }
    return opts;
  }

  /** The API server's URL and the CA (PEM) the kubeconfig trusts for it, if any. */
  connection(): { server: string; caPem?: string } {
    const c = this.kc.getCurrentCluster();
    let caPem: string | undefined;
    if (c?.caData) caPem = Buffer.from(c.caData, 'base64').toString('utf8');
    else if (c?.caFile) {
      try {
        caPem = readFileSync(c.caFile, 'utf8');
      } catch {
        caPem = undefined;
      }
    }
    return { server: this.server, ...(caPem ? { caPem } : {}) };
  }

  makeUrl(path: string, query?: Record<string, string | undefined>): URL {
    const u = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, v);
    return u;
  }

  /**
   * Open a request and resolve with the response stream (for watches). `idleMs`: a
   * connection silent that long is dropped (STRAIT_ERR_STORE_UNAVAILABLE), so a hung
   * server cannot hang the caller.
   */
  async open(spec: RequestSpec, signal?: AbortSignal, idleMs = this.requestTimeoutMs): Promise<IncomingMessage> {
    const opts = await this.options();
    const u = this.makeUrl(spec.path, spec.query);
    const payload = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body));
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k.toLowerCase()] = v;
    if (opts.auth) headers['authorization'] = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    if (payload) {
      headers['content-type'] = spec.contentType ?? 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const req = (u.protocol === 'http:' ? httpRequest : httpsRequest)(u, {
      method: spec.method,
      headers,
      agent: this.agent,
      ...(u.protocol === 'https:' ? this.tls : {}),
      signal,
    });
    req.setTimeout(idleMs, () => req.destroy(Object.assign(new Error(`no answer for ${idleMs} ms`), { code: 'ETIMEDOUT' })));
    req.once('socket', (sock: Socket) => guardConnect(req, sock));
    return new Promise((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', (err: NodeJS.ErrnoException) => {
        if (err.name === 'AbortError') reject(err);
        else reject(E.storeUnavailable(this.server, err.code ? `${err.code} (${err.message})` : err.message));
      });
      req.end(payload);
    });
  }

  async request(spec: RequestSpec): Promise<KubeResponse> {
    const res = await this.open(spec);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        return { status: res.statusCode ?? 0, body: { message: text.slice(0, 500) }, text };
      }
    }
    return { status: res.statusCode ?? 0, body };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The subset of KubeHttp the store and its watches use. */
export type HttpClient = Pick<KubeHttp, 'request' | 'open' | 'close' | 'server'> & { connection?(): Promise<{ server: string; caPem?: string }> };

/**
 * A KubeHttp that exists once `ready` resolves. @kubernetes/client-node takes a second
 * or more to load, so it is imported only when a Kubernetes store is opened (processes
 * of the local world never pay for it), and a kubeconfig problem is reported by the
 * first call (STRAIT_ERR_KUBE_CONFIG).
 */
export class LazyHttp implements HttpClient {
  private real: KubeHttp | undefined;
  private closed = false;

  constructor(
    private readonly ready: Promise<KubeHttp>,
    private readonly source: string,
  ) {
    ready.then(
      (h) => {
        this.real = h;
        if (this.closed) h.close();
      },
      () => undefined,
    );
  }

  get server(): string {
    return this.real?.server ?? this.source;
  }

  async request(spec: RequestSpec): Promise<KubeResponse> {
    return (await this.ready).request(spec);
  }

  async open(spec: RequestSpec, signal?: AbortSignal, idleMs?: number): Promise<IncomingMessage> {
    return (await this.ready).open(spec, signal, idleMs);
  }

  async connection(): Promise<{ server: string; caPem?: string }> {
    return (await this.ready).connection();
  }

  close(): void {
    this.closed = true;
    this.real?.close();
  }
}
