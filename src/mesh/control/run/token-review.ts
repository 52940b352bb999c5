// Who calls the mesh configuration service in Kubernetes mode: the caller's projected token,
// checked by a TokenReview.
import type { Logger } from 'pino';
import { isStraitError } from '../../../base/errors/index.js';
import type { KubernetesResourceStore } from '../../../platform/store/index.js';
import type { MeshCaller } from '../config-server/index.js';
import { TOKEN_AUDIENCE } from '../sidecar-injector/index.js';

/**
 * Who a bearer token belongs to, by a TokenReview with the audience `strait` (a projected token
 * made for the mesh; the pod's default token is not accepted). The configuration service caches
 * the answers and bounds the reviews (src/mesh/control/config-server/token-reviews.ts); a review
 * the API server does not answer throws (nothing is cached, the caller retries).
 */
export function tokenReviewer(store: KubernetesResourceStore, log: Logger): (token: string) => Promise<MeshCaller | undefined> {
  return async (token) => {
    try {
      const r = await store.raw({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [TOKEN_AUDIENCE] } },
      });
      const st = (r.body as { status?: { authenticated?: boolean; audiences?: string[]; user?: { username?: string; extra?: Record<string, string[]> } } })
        .status;
      const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(st?.user?.username ?? '');
      if (st?.authenticated === true && m && (st.audiences ?? []).includes(TOKEN_AUDIENCE)) {
        const pod = st.user?.extra?.['authentication.kubernetes.io/pod-name']?.[0];
        return { namespace: m[1] as string, serviceAccount: m[2] as string, ...(pod ? { pod } : {}) };
      }
      return undefined;
    } catch (err) {
      log.warn({ err: isStraitError(err) ? err.message : String(err) }, 'TokenReview failed');
      throw err;
    }
  };
}
