// SPIFFE identities of mesh workloads: spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>.
import { E } from '../../../base/errors/index.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const TRUST_DOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export interface WorkloadIdentity {
  trustDomain: string;
  namespace: string;
  serviceAccount: string;
}

export function spiffeId(id: WorkloadIdentity): string {
  if (!TRUST_DOMAIN.test(id.trustDomain)) throw E.meshIdentityInvalid('trust domain', id.trustDomain);
  if (!DNS_LABEL.test(id.namespace)) throw E.meshIdentityInvalid('namespace', id.namespace);
  if (!DNS_LABEL.test(id.serviceAccount)) throw E.meshIdentityInvalid('service account', id.serviceAccount);
  return `spiffe://${id.trustDomain}/ns/${id.namespace}/sa/${id.serviceAccount}`;
}

/** Parse a SPIFFE ID of the Istio shape; undefined when it is not one. */
export function parseSpiffeId(uri: string): WorkloadIdentity | undefined {
  const m = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(uri);
  if (!m) return undefined;
  return { trustDomain: m[1] as string, namespace: m[2] as string, serviceAccount: m[3] as string };
}
