// The store API client: a ResourceStore that talks to serveStores over its unix socket.
import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { E } from '../../../base/errors/index.js';
import type { ApplyOptions, CoreEvent, KindRef, KubeObject, ListOptions, ObjectList, ResourceStore, Watch, WatchEvent, WatchOptions } from '../types.js';
import { API_PREFIX, fromWireError, isWireError } from './protocol.js';

export interface StoreClientOptions {
  socketPath: string;
  token: string;
  /** which cluster's store ("cluster-a", "broker", ...) */
  cluster: string;
  /** a request whose connection stays silent this long fails with STRAIT_ERR_STORE_UNAVAILABLE (default 30 s; watches have none) */
  requestTimeoutMs?: number;
}

export interface StoreClientFileOptions {
  socketPath: string;
  /** file holding the bearer token (the world writes it with mode 0600) */
  tokenFile: string;
  cluster: string;
}

type Query = Record<string, string | undefined>;

const REQUEST_TIMEOUT_MS = 30_000;

function qs(q: Query): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** a kept-alive connection the server closed under the request (call() sends it again) */
class StaleSocket extends Error {}

class StoreClient implements ResourceStore {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 16 });
  private readonly base: string;
  private readonly auth: string;
  private readonly watches = new Set<ClientWatch>();
  private closed = false;

  constructor(private readonly opts: StoreClientOptions) {
    this.base = `${API_PREFIX}/${encodeURIComponent(opts.cluster)}`;
    this.auth = `Bearer ${opts.token}`;
  }

  private unavailable(reason: string) {
    return E.storeUnavailable(this.opts.socketPath, reason);
  }

  /**
   * One request; resolves with the parsed JSON body or rejects with the server's StraitError.
   * A request that went out on a kept-alive connection the server was closing at that moment
   * (its keep-alive timeout) fails with ECONNRESET or EPIPE before any answer: it is sent once
   * more on a new connection (Node's http docs, `request.reusedSocket`), never a second time.
   */
  private async call<R>(method: string, path: string, body?: unknown): Promise<R> {
    try {
      return await this.callOnce<R>(method, path, body);
    } catch (err) {
      if (!(err instanceof StaleSocket)) throw err;
      return this.callOnce<R>(method, path, body, false);
    }
  }

  private callOnce<R>(method: string, path: string, body: unknown, mayRetry = true): Promise<R> {
    if (this.closed) return Promise.reject(this.unavailable('the client was closed'));
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<R>((resolve, reject) => {
      const req = request(
        {
          socketPath: this.opts.socketPath,
          agent: this.agent,
          method,
          path: `${this.base}${path}`,
          headers: {
            authorization: this.auth,
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err) => reject(this.unavailable(err.message)));
          res.on('end', () => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              reject(this.unavailable(`HTTP ${res.statusCode} with a body that is not JSON`));
              return;
            }
            if (res.statusCode === 200) resolve(parsed as R);
            else if (isWireError(parsed)) reject(fromWireError(parsed));
            else reject(this.unavailable(`HTTP ${res.statusCode}`));
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (mayRetry && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) reject(new StaleSocket());
        else reject(this.unavailable(err.message));
      });
      // a server that accepts but never answers (stopped, wedged, cut off) must not hang callers forever
      const ms = this.opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
      req.setTimeout(ms, () => req.destroy(new Error(`no answer within ${ms / 1000} s`)));
      req.end(payload);
    });
  }

  private static kq(kind: KindRef): Query {
    return { apiVersion: kind.apiVersion, kind: kind.kind };
  }

  async get<T extends KubeObject = KubeObject>(kind: KindRef, name: string, namespace?: string): Promise<T | undefined> {
    const r = await this.call<{ object: T | null }>('GET', `/object${qs({ ...StoreClient.kq(kind), name, namespace })}`);
    return r.object ?? undefined;
  }

  list<T extends KubeObject = KubeObject>(kind: KindRef, opts: ListOptions = {}): Promise<ObjectList<T>> {
    return this.call('GET', `/list${qs({ ...StoreClient.kq(kind), namespace: opts.namespace, labelSelector: opts.labelSelector })}`);
  }

  watch<T extends KubeObject = KubeObject>(kind: KindRef, opts: WatchOptions, onEvent: (ev: WatchEvent<T>) => void): Watch {
    const w = new ClientWatch(
      onEvent as (ev: WatchEvent) => void,
      (x) => this.watches.delete(x),
      (r) => this.unavailable(r),
    );
    if (this.closed) {
      w.fail(this.unavailable('the client was closed'));
      return w;
    }
    this.watches.add(w);
    const path = `${this.base}/watch${qs({
      ...StoreClient.kq(kind),
      namespace: opts.namespace,
      labelSelector: opts.labelSelector,
      resourceVersion: opts.resourceVersion,
    })}`;
    // a watch holds its connection for its whole life: not from the keep-alive pool
    const req = request({ socketPath: this.opts.socketPath, method: 'GET', path, agent: false, headers: { authorization: this.auth } }, (res) => w.attach(res));
    req.on('error', (err) => w.fail(this.unavailable(err.message)));
    req.end();
    w.request = req;
    return w;
  }

  apply<T extends KubeObject = KubeObject>(obj: T, opts: ApplyOptions = {}): Promise<T> {
    return this.call('POST', `/apply${qs({ dryRun: opts.dryRun ? '1' : undefined, fieldManager: opts.fieldManager })}`, obj);
  }

  update<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.call('PUT', '/update', obj);
  }

  updateStatus<T extends KubeObject = KubeObject>(obj: T): Promise<T> {
    return this.call('PUT', '/status', obj);
  }

  async delete(kind: KindRef, name: string, namespace?: string): Promise<boolean> {
    const r = await this.call<{ deleted: boolean }>('DELETE', `/object${qs({ ...StoreClient.kq(kind), name, namespace })}`);
    return r.deleted;
  }

  async recordEvent(ev: CoreEvent): Promise<void> {
    await this.call('POST', '/events', ev);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.watches]) w.stop();
    this.agent.destroy();
  }
}

class ClientWatch implements Watch {
  readonly done: Promise<void>;
  request: ReturnType<typeof request> | undefined;
  private resolveDone!: () => void;
  private rejectDone!: (err: unknown) => void;
  private finished = false;
  private buf = '';

  constructor(
    private readonly onEvent: (ev: WatchEvent) => void,
    private readonly onEnd: (w: ClientWatch) => void,
    private readonly unavailable: (reason: string) => Error,
  ) {
    this.done = new Promise<void>((res, rej) => {
      this.resolveDone = res;
      this.rejectDone = rej;
    });
    this.done.catch(() => undefined);
  }

  attach(res: IncomingMessage): void {
    if (this.finished) {
      res.destroy();
      return;
    }
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          this.fail(isWireError(body) ? fromWireError(body) : this.unavailable(`HTTP ${res.statusCode}`));
        } catch {
          this.fail(this.unavailable(`HTTP ${res.statusCode}`));
        }
      });
      return;
    }
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.feed(chunk));
    res.on('error', (err) => this.fail(this.unavailable(err.message)));
    res.on('close', () => this.fail(this.unavailable('the watch stream ended (the store server went away)')));
  }

  private feed(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while (!this.finished && (nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line === '') continue;
      let msg: { type: string; object?: KubeObject; error?: unknown };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        this.fail(this.unavailable('the watch stream carried a line that is not JSON'));
        return;
      }
      if (msg.type === 'ERROR') {
        this.fail(isWireError(msg.error) ? fromWireError(msg.error) : this.unavailable('the watch ended with an unknown error'));
        return;
      }
      try {
        this.onEvent(msg as WatchEvent);
      } catch (err) {
        this.fail(err);
        return;
      }
    }
  }

  private finish(): boolean {
    if (this.finished) return false;
    this.finished = true;
    this.onEnd(this);
    this.request?.destroy();
    return true;
  }

  stop(): void {
    if (this.finish()) this.resolveDone();
  }

  fail(err: unknown): void {
    if (this.finish()) this.rejectDone(err);
  }
}

export function connectStore(opts: StoreClientOptions): ResourceStore {
  return new StoreClient(opts);
}

/** connectStore with the token read from a file (the CLI passes the paths of stateFiles()). */
export function connectStoreFromFiles(opts: StoreClientFileOptions): ResourceStore {
  let token: string;
  try {
    token = readFileSync(opts.tokenFile, 'utf8').trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw E.storeUnavailable(
      opts.socketPath,
      code === 'ENOENT'
        ? `the token file ${JSON.stringify(opts.tokenFile)} does not exist`
        : `cannot read the token file ${JSON.stringify(opts.tokenFile)}: ${(err as Error).message}`,
    );
  }
  return connectStore({ socketPath: opts.socketPath, token, cluster: opts.cluster });
}

/** The store names a store API serves (GET /v1/clusters): each cluster's, and "broker". */
export function listStoreClusters(opts: { socketPath: string; token: string }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: opts.socketPath, method: 'GET', path: API_PREFIX, headers: { authorization: `Bearer ${opts.token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          if (res.statusCode === 200) resolve(((body as { clusters?: string[] }).clusters ?? []).filter((c) => typeof c === 'string'));
          else reject(isWireError(body) ? fromWireError(body) : E.storeUnavailable(opts.socketPath, `HTTP ${res.statusCode}`));
        } catch {
          reject(E.storeUnavailable(opts.socketPath, `HTTP ${res.statusCode} with a body that is not JSON`));
        }
      });
    });
    req.on('error', (err) => reject(E.storeUnavailable(opts.socketPath, err.message)));
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.end();
  });
}
