// The mesh configuration service of Kubernetes mode (istiod's role for its proxies): each
// injected pod's sidecar asks the control module for what it is to enforce (its identity,
// inbound modes, outbound policies) over TLS, with a token of its ServiceAccount bound to
// the pod (audience `strait`, projected by the injected volume). The caller's identity
// comes only from the token (the daemon checks it with a TokenReview): a pod gets its own
// configuration and nothing else.
//
//   GET /v1/sidecar   the caller pod's configuration (SidecarConfig JSON), ETag = its hash
//   GET /v1/ingress   the ingress gateway's configuration (its ServiceAccount only)
//   ?wait=N (s, <= 60) with If-None-Match: held until the configuration changes (then 200)
//   or N seconds pass (304): a long poll, so a policy change reaches the pods at once.
//   POST /v1/flows    the inbound flows the caller pod's proxy saw since its last report (a
//                     FlowReport, <= 1 MiB): 204; written into the pod's MeshTrafficObservation
//                     (as the local world's mesh agent does with its sidecars' reports)
//
// Answers: 200 configuration; 304 unchanged; 401 no or bad token; 429 too many unknown tokens
// from one address (each costs a TokenReview: token-reviews.ts bounds them); 403 the token's ServiceAccount
// is not the pod's; 404 the pod is not known yet (the proxy waits and asks again, enforcing
// nothing meanwhile); a pod known but outside the mesh gets an explicit pass-through
// configuration (header strait-mesh: outside), as Istio's sidecar without a mesh policy.
import { E } from '../../../base/errors/index.js';
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { listenServer } from '../../../base/net/index.js';
import { HttpError, handleWith, readJsonBody, requestTarget, toHttpError } from '../../../platform/http/index.js';
import type { PodConfigState } from '../controller/index.js';
import { THROTTLED, boundedReviews, type TokenReviewLimits } from './token-reviews.js';

/** Who a token belongs to (from a TokenReview). */
export interface MeshCaller {
  namespace: string;
  serviceAccount: string;
  /** the pod the token is bound to (a projected token's pod-name); absent for an unbound token */
  pod?: string;
}

export interface MeshConfigServerOptions {
  cert: string;
  key: string;
  host?: string;
  /** 0 = any free port */
  port?: number;
  /** the caller of a bearer token (one TokenReview), or undefined when the token is not valid for
   *  this audience; throws when it cannot tell. Answers are cached and calls bounded (token-reviews.ts). */
  authenticate(token: string): Promise<MeshCaller | undefined>;
  /** the bounds on authenticate's calls (default DEFAULT_TOKEN_REVIEW_LIMITS) */
  reviewLimits?: Partial<TokenReviewLimits>;
  /** the pod's configuration as the mesh controller last computed it */
  podConfig(namespace: string, pod: string): PodConfigState | undefined;
  /** the ingress gateway: its identity and configuration, when there is one */
  ingress?: { namespace: string; serviceAccount: string; config(): string | undefined };
  /** longest long poll, s (default 60) */
  maxWaitS?: number;
  /** a flow report of pod `namespace/pod`'s proxy (POST /v1/flows; absent: 404); false: not taken now (503, the proxy sends it again) */
  onFlows?: (namespace: string, pod: string, report: Record<string, unknown>) => boolean;
  /** least time between two flow reports of one pod, ms (default 1000; sooner: 429) */
  minFlowIntervalMs?: number;
  onRequest?: (outcome: 'config' | 'unchanged' | 'unauthenticated' | 'forbidden' | 'unknown' | 'outside' | 'flows' | 'throttled') => void;
}

export interface MeshConfigServer {
  readonly port: number;
  readonly server: Server;
  /** the configurations may have changed (after a reconcile): wake the long polls */
  notify(): void;
  /** a new serving certificate (rotation) */
  setCertificate(cert: string, key: string): void;
  close(): Promise<void>;
}

/** The configuration of a pod outside the mesh: plaintext both ways, nothing enforced. */
export const PASS_THROUGH = JSON.stringify({ inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: { mode: 'DISABLE' } } });

const etagOf = (text: string): string => `"${createHash('sha256').update(text).digest('base64url').slice(0, 22)}"`;

export async function serveMeshConfig(o: MeshConfigServerOptions): Promise<MeshConfigServer> {
  const waiters = new Set<() => void>();
  const authenticate = boundedReviews((token) => o.authenticate(token), o.reviewLimits);
  /** when each pod last reported flows (a pod may post at most every minFlowIntervalMs) */
  const lastFlows = new Map<string, number>();
  const minFlowMs = o.minFlowIntervalMs ?? 1000;
  const maxWait = o.maxWaitS ?? 60;

  /** the answer for the caller now: [status, body, etag?, outside?] */
  const answer = (what: 'sidecar' | 'ingress', caller: MeshCaller): { text: string; outside: boolean } | HttpError => {
    if (what === 'ingress') {
      const g = o.ingress;
      if (!g || g.namespace !== caller.namespace || g.serviceAccount !== caller.serviceAccount) {
        return new HttpError(E.meshCallerDenied, `${caller.namespace}/${caller.serviceAccount} is not the mesh ingress gateway's ServiceAccount`);
      }
      const text = g.config();
      return text === undefined ? new HttpError(E.meshConfigUnknown, 'the ingress configuration is not computed yet') : { text, outside: false };
    }
    if (!caller.pod)
      return new HttpError(E.meshCallerDenied, 'the token is not bound to a pod (project a ServiceAccount token with audience "strait" into the pod)');
    const st = o.podConfig(caller.namespace, caller.pod);
    if (!st) return new HttpError(E.meshConfigUnknown, `pod ${caller.namespace}/${caller.pod} is not known to the mesh controller yet`);
    if (st.serviceAccount !== caller.serviceAccount) {
      return new HttpError(
        E.meshCallerDenied,
        `the token's ServiceAccount ${caller.serviceAccount} is not pod ${caller.namespace}/${caller.pod}'s (${st.serviceAccount})`,
      );
    }
    return st.state === 'mesh' ? { text: st.text, outside: false } : { text: PASS_THROUGH, outside: true };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const { path, query } = requestTarget(req);
    const flows = req.method === 'POST' && path === '/v1/flows' && o.onFlows !== undefined;
    const what = path === '/v1/sidecar' ? 'sidecar' : path === '/v1/ingress' ? 'ingress' : undefined;
    if (!flows && (req.method !== 'GET' || !what)) throw new HttpError(E.httpNoRoute, `GET /v1/sidecar or /v1/ingress${o.onFlows ? ', POST /v1/flows' : ''}`);
    const auth = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(req.headers.authorization ?? '');
    // an unknown token costs a TokenReview: bounded per source address and in all (token-reviews.ts)
    const caller = auth ? await authenticate(auth[1] as string, req.socket.remoteAddress ?? '').catch(() => undefined) : undefined;
    if (caller === THROTTLED) {
      o.onRequest?.('throttled');
      throw new HttpError(E.httpRateLimited, 'too many unknown tokens from this address (each costs a TokenReview); try again in a few seconds');
    }
    if (!caller) {
      o.onRequest?.('unauthenticated');
      throw new HttpError(E.meshTokenRequired, 'a ServiceAccount token with audience "strait" is required (Authorization: Bearer)');
    }
    if (flows) {
      // only a pod in the mesh reports, and only for itself (the token says which pod)
      const a = answer('sidecar', caller);
      if (a instanceof HttpError || a.outside) {
        o.onRequest?.(a instanceof HttpError && a.status === 404 ? 'unknown' : 'forbidden');
        throw a instanceof HttpError ? a : new HttpError(E.meshCallerDenied, `pod ${caller.namespace}/${caller.pod ?? '?'} is not in the mesh`);
      }
      const key = `${caller.namespace}/${caller.pod as string}`;
      const now = Date.now();
      if (now - (lastFlows.get(key) ?? 0) < minFlowMs) {
        o.onRequest?.('throttled');
        throw new HttpError(E.httpRateLimited, `pod ${key} reports flows at most every ${minFlowMs} ms`);
      }
      if (lastFlows.size > 50_000) for (const [k, t] of lastFlows) if (now - t > 60_000) lastFlows.delete(k);
      lastFlows.set(key, now);
      const report = await readJsonBody(req, { limit: 1 << 20 });
      if (!o.onFlows?.(caller.namespace, caller.pod as string, report))
        throw new HttpError(
          E.meshFlowsNotRecorded,
          'observed traffic is not being recorded now (the control module cannot write MeshTrafficObservations yet); send it again later',
        );
      o.onRequest?.('flows');
      res.writeHead(204).end();
      return;
    }
    if (!what) throw new HttpError(E.httpNoRoute, 'GET /v1/sidecar or /v1/ingress');
    const waitS = Math.min(maxWait, Math.max(0, Number(query.get('wait') ?? 0) || 0));
    const have = req.headers['if-none-match'];
    const deadline = Date.now() + waitS * 1000;
    for (;;) {
      const a = answer(what, caller);
      if (a instanceof HttpError) {
        o.onRequest?.(a.status === 404 ? 'unknown' : 'forbidden');
        throw a;
      }
      const etag = etagOf(a.text);
      if (etag !== have) {
        o.onRequest?.(a.outside ? 'outside' : 'config');
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(a.text),
          etag,
          'cache-control': 'no-store',
          'strait-mesh': a.outside ? 'outside' : 'member',
        });
        res.end(a.text);
        return;
      }
      const left = deadline - Date.now();
      if (left <= 0 || req.socket.destroyed) {
        o.onRequest?.('unchanged');
        res.writeHead(304, { etag }).end();
        return;
      }
      // until a reconcile (notify) or the deadline; then look again
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          waiters.delete(done);
          req.socket.off('close', done);
          resolve();
        };
        const t = setTimeout(done, left);
        waiters.add(done);
        req.socket.once('close', done);
      });
    }
  };

  const server = createServer(
    { cert: o.cert, key: o.key, minVersion: 'TLSv1.2' },
    handleWith(handle, (err) => {
      const e = toHttpError(err);
      return { status: e.status, body: { code: e.code, message: e.message }, code: e.code };
    }),
  );
  // long polls: the server must not cut them (Node's default request timeout is 300 s)
  server.requestTimeout = (maxWait + 30) * 1000;
  const bound = await listenServer(server, { port: o.port ?? 0, host: o.host ?? '127.0.0.1' });
  return {
    port: bound.port,
    server,
    notify() {
      for (const w of [...waiters]) w();
    },
    setCertificate(cert, key) {
      server.setSecureContext({ cert, key, minVersion: 'TLSv1.2' });
    },
    async close() {
      for (const w of [...waiters]) w();
      server.closeAllConnections();
      await bound.close();
    },
  };
}
