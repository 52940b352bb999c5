// admission.k8s.io/v1 AdmissionReview in, AdmissionReview out. Any well-formed review is
// allowed (injection never blocks a pod); a malformed one is STRAIT_ERR_USAGE (HTTP 400).
import { E } from '../../../base/errors/index.js';
import { sidecarPatch, type SidecarOptions } from './patch.js';

export interface AdmissionResponse {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: { uid: string; allowed: true; patchType?: 'JSONPatch'; patch?: string; warnings?: string[] };
}

export function reviewAdmission(body: unknown, opts: SidecarOptions): AdmissionResponse {
  if (typeof body !== 'object' || body === null) throw E.usage('AdmissionReview: the body is not a JSON object');
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: unknown };
  if (review.kind !== 'AdmissionReview' || review.apiVersion !== 'admission.k8s.io/v1') {
    throw E.usage(`AdmissionReview: expected admission.k8s.io/v1 AdmissionReview, got ${JSON.stringify(review.apiVersion)}/${JSON.stringify(review.kind)}`);
  }
  const req = review.request as { uid?: unknown; kind?: { kind?: unknown }; operation?: unknown; object?: unknown; namespace?: unknown } | undefined;
  if (typeof req !== 'object' || req === null || typeof req.uid !== 'string' || req.uid === '') {
    throw E.usage('AdmissionReview: request.uid is missing');
  }
  const base: AdmissionResponse = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: req.uid, allowed: true } };
  if (req.kind?.kind !== 'Pod' || req.operation !== 'CREATE' || typeof req.object !== 'object' || req.object === null) return base;
  const ops = sidecarPatch(req.object as Parameters<typeof sidecarPatch>[0], opts, typeof req.namespace === 'string' ? req.namespace : undefined);
  if (ops.length === 0) return base;
  base.response.patchType = 'JSONPatch';
  base.response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
  return base;
}
