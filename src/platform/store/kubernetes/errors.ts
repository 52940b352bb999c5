// API server Status -> strait error codes.
import { E, type StraitError } from '../../../base/errors/index.js';

/** The fields of a metav1.Status that strait reads. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; causes?: { field?: string; message?: string; reason?: string }[] };
}

export function asStatus(body: unknown): KubeStatus {
  return typeof body === 'object' && body !== null ? (body as KubeStatus) : {};
}

export interface ErrorContext {
  /** "create", "update", "get", ... with the object, for messages */
  verb: string;
  kind: string;
  name: string;
  namespace?: string;
  /** resourceVersion the caller sent (for conflicts) */
  resourceVersion?: string;
  /** "plural.group" of the kind, and the API server: a 404 for the resource itself names them */
  resource?: string;
  server?: string;
}

/**
 * A 404 that is about the resource type, not an object: the API server serves no such
 * resource ("404 page not found" for an unknown group/version, a Status without details for
 * an unknown resource of a known one). An absent object's 404 names it (details.name).
 */
export function resourceNotServed(status: number, body: unknown): boolean {
  return status === 404 && typeof asStatus(body).details?.name !== 'string';
}

/** Map a non-2xx answer to a StraitError. 409 is split into ALREADY_EXISTS and CONFLICT. */
export function mapStatus(status: number, body: unknown, ctx: ErrorContext): StraitError {
  const s = asStatus(body);
  const msg = s.message ?? '';
  const what = `${ctx.verb} ${ctx.kind} ${JSON.stringify(ctx.name)}${ctx.namespace ? ` in namespace ${JSON.stringify(ctx.namespace)}` : ''}`;
  switch (status) {
    case 404:
      if (ctx.resource !== undefined && resourceNotServed(status, body)) return E.kubeCrdMissing(ctx.server ?? '', [ctx.resource]);
      return E.notFound(ctx.kind, ctx.name, ctx.namespace);
    case 409:
      if (s.reason === 'AlreadyExists') return E.alreadyExists(ctx.kind, ctx.name, ctx.namespace);
      return E.conflict(ctx.kind, ctx.name, ctx.resourceVersion ?? '', '(newer)');
    case 410:
      return E.watchExpired(ctx.resourceVersion ?? '', '(compacted)');
    case 400:
      return E.usage(`${what}: ${msg}`, { status, reason: s.reason });
    case 401:
    case 403:
      return E.kubeForbidden(what, msg);
    case 422: {
      const cause = s.details?.causes?.[0];
      return E.objectInvalid(ctx.kind, ctx.namespace ? `${ctx.namespace}/${ctx.name}` : ctx.name, cause?.field ?? '(object)', cause?.message ?? msg);
    }
    case 503:
    case 504:
      return E.storeUnavailable(what, `HTTP ${status} ${s.reason ?? ''} ${msg}`.trim());
    default:
      return E.kubeApi(what, status, s.reason ?? '', msg);
  }
}
