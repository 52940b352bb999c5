// Who calls the mesh configuration service in Kubernetes mode: the caller's projected token,
// checked by a TokenReview.
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { isStraitError } from '../../../base/errors/index.js';
import type { KubernetesResourceStore } from '../../../platform/store/index.js';
import type { MeshCaller } from '../config-server/index.js';
import { TOKEN_AUDIENCE } from '../sidecar-injector/index.js';

/**
 * Who a bearer token belongs to, by a TokenReview with the audience `strait` (a projected token
 * made for the mesh; the pod's default token is not accepted); answers cached for 60 s.
 */
export function tokenReviewer(store: KubernetesResourceStore, log: Logger): (token: string) => Promise<MeshCaller | undefined> {
  const cache = new Map<string, { caller: MeshCaller | undefined; until: number }>();
  return async (token) => {
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.caller;
    let caller: MeshCaller | undefined;
    try {
      const r = await store.raw({
        method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [TOKEN_AUDIENCE] } },
      });
      const st = (r.body as { status?: { authenticated?: boolean; audiences?: string[]; user?: { username?: string; extra?: Record<string, string[]> } } }).status;
      const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(st?.user?.username ?? '');
      if (st?.authenticated === true && m && (st.audiences ?? []).includes(TOKEN_AUDIENCE)) {
        const pod = st.user?.extra?.['authentication.kubernetes.io/pod-name']?.[0];
        caller = { namespace: m[1] as string, serviceAccount: m[2] as string, ...(pod ? { pod } : {}) };
      }
    } catch (err) {
      // the API server could not say: no answer is cached, the caller retries
      log.warn({ err: isStraitError(err) ? err.message : String(err) }, 'TokenReview failed');
      return undefined;
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(key, { caller, until: Date.now() + 60_000 });
    return caller;
  };
}

