// The proxy's side of the mesh configuration service (Kubernetes mode, docs/kubernetes.md):
// a long poll of the control module over TLS (verified against the mesh root the pod has
// mounted from istio-ca-root-cert) with the pod's projected ServiceAccount token, re-read
// from its files at every request (the kubelet rotates the token). Each new configuration
// goes to onConfig; errors are reported and retried with a backoff (1 s doubling to 5 s).
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { Backoff, type BackoffPolicy } from '../../../base/backoff/index.js';

/** a failed request: again after 1 s, doubling, at most 5 s */
const CONFIG_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 1000, maxMs: 5000 });

export interface MeshConfigClientOptions {
  /** https://host:port of the control module's mesh configuration service */
  url: string;
  path: '/v1/sidecar' | '/v1/ingress';
  tokenFile: string;
  /** the mesh root certificate (PEM) the service's certificate must chain to */
  caFile: string;
  /** long-poll length, s (default 30) */
  waitS?: number;
  /** a new configuration (`outside`: the pod is not in the mesh; a pass-through configuration) */
  onConfig(config: unknown, outside: boolean): void;
  /** a failed attempt (it is retried) */
  onError(message: string, status?: number): void;
}

export interface MeshConfigClient {
  stop(): void;
}

interface Answer {
  status: number;
  etag?: string;
  outside: boolean;
  body: string;
}

function get(o: MeshConfigClientOptions, etag: string | undefined, waitS: number, signal: AbortSignal): Promise<Answer> {
  const token = readFileSync(o.tokenFile, 'utf8').trim();
  const ca = readFileSync(o.caFile, 'utf8');
  const u = new URL(`${o.path}?wait=${waitS}`, o.url);
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: 'GET',
        ca,
        signal,
        timeout: (waitS + 15) * 1000,
        headers: { authorization: `Bearer ${token}`, ...(etag ? { 'if-none-match': etag } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > 8 << 20) req.destroy(new Error('configuration larger than 8 MiB'));
          else chunks.push(c);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            outside: res.headers['strait-mesh'] === 'outside',
            body: Buffer.concat(chunks).toString('utf8'),
            ...(typeof res.headers.etag === 'string' ? { etag: res.headers.etag } : {}),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${waitS + 15} s`)));
    req.on('error', reject);
    req.end();
  });
}

/** Follow the configuration until stop(). The first request does not wait. */
export function followMeshConfig(o: MeshConfigClientOptions): MeshConfigClient {
  const abort = new AbortController();
  const waitS = o.waitS ?? 30;
  let etag: string | undefined;
  const backoff = new Backoff(CONFIG_BACKOFF);
  // the abort listener goes with its timer (one per retry would pile up on the signal)
  const pause = (ms: number): Promise<void> =>
    new Promise((r) => {
      const done = (): void => {
        clearTimeout(t);
        abort.signal.removeEventListener('abort', done);
        r();
      };
      const t = setTimeout(done, ms);
      abort.signal.addEventListener('abort', done, { once: true });
    });
  void (async () => {
    while (!abort.signal.aborted) {
      try {
        const a = await get(o, etag, etag ? waitS : 0, abort.signal);
        if (a.status === 200) {
          const config = JSON.parse(a.body) as unknown;
          etag = a.etag;
          backoff.reset();
          o.onConfig(config, a.outside);
          continue;
        }
        if (a.status === 304) {
          backoff.reset();
          continue;
        }
        let msg = a.body;
        try {
          msg = (JSON.parse(a.body) as { message?: string }).message ?? a.body;
        } catch {
          /* as sent */
        }
        o.onError(`${o.url}${o.path}: HTTP ${a.status}: ${msg}`, a.status);
      } catch (err) {
        if (abort.signal.aborted) return;
        o.onError(`${o.url}${o.path}: ${(err as Error).message}`);
      }
      await pause(backoff.fail());
    }
  })();
  return { stop: () => abort.abort() };
}

export interface MeshFlowsPoster {
  /** queue a report (if any) and send what is queued (in order); resolves when the queue is empty or a send failed */
  send(report?: unknown): Promise<void>;
  /** reports queued after failures (at most `maxQueued`; older ones dropped) */
  readonly queued: number;
  /** reports dropped because the queue was full */
  readonly dropped: number;
}

/**
 * POST the proxy's flow reports (deltas) to the configuration service's /v1/flows with the
 * pod's token. A report that could not be sent is kept and sent first next time (at most
 * `maxQueued`, default 30: a minute of 2-second reports; the oldest go first when full); one
 * the service refuses as such (400, 413) is dropped. Delivery is at least once: an answer lost
 * after the service took a report makes it count twice.
 */
export function meshFlowsPoster(
  o: Pick<MeshConfigClientOptions, 'url' | 'tokenFile' | 'caFile'> & { maxQueued?: number; onError(message: string): void },
): MeshFlowsPoster {
  const queue: string[] = [];
  const max = o.maxQueued ?? 30;
  let dropped = 0;
  let busy = false;
  const post = (body: string): Promise<{ status: number; text: string }> => {
    const token = readFileSync(o.tokenFile, 'utf8').trim();
    const ca = readFileSync(o.caFile, 'utf8');
    return new Promise((resolve, reject) => {
      const req = request(
        new URL('/v1/flows', o.url),
        {
          method: 'POST',
          ca,
          timeout: 15_000,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            if (text.length < 4096) text += c;
          });
          res.on('end', () =>
            res.statusCode === 204 || res.statusCode === 400 || res.statusCode === 413
              ? resolve({ status: res.statusCode, text })
              : reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`)),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer in 15 s')));
      req.on('error', reject);
      req.end(body);
    });
  };
  return {
    get queued() {
      return queue.length;
    },
    get dropped() {
      return dropped;
    },
    async send(report) {
      if (report !== undefined) queue.push(JSON.stringify(report));
      while (queue.length > max) {
        queue.shift();
        dropped++;
      }
      if (busy) return;
      busy = true;
      // the report in flight is off the queue (a trim meanwhile cannot touch it); back at its head on failure
      let inFlight: string | undefined;
      try {
        while ((inFlight = queue.shift()) !== undefined) {
          const { status, text } = await post(inFlight);
          if (status !== 204) {
            dropped++;
            // the service's reason (e.g. STRAIT_ERR_VERSION_UNSUPPORTED from an older control module)
            o.onError(`${o.url}/v1/flows: HTTP ${status}: the report was refused; dropped: ${text.slice(0, 300)}`);
          }
          inFlight = undefined;
        }
      } catch (err) {
        if (inFlight !== undefined) {
          queue.unshift(inFlight);
          while (queue.length > max) {
            queue.shift();
            dropped++;
          }
        }
        o.onError(`${o.url}/v1/flows: ${(err as Error).message}`);
      } finally {
        busy = false;
      }
    },
  };
}
