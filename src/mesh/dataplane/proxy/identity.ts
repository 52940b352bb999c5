// TLS contexts built from a workload identity, and the SPIFFE check of a peer's
// certificate on both sides (Istio checks URI SANs, never host names). A mesh peer is a
// certificate of the mesh CA with exactly one URI SAN (SPIFFE X509-SVID), of the shape
// spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>, in the mesh's trust
// domain (the one of the proxy's own certificate) or, where the policy names peers
// (DestinationRule subjectAltNames), one of those.
import { X509Certificate } from 'node:crypto';
import { createSecureContext, type PeerCertificate, type SecureContext } from 'node:tls';

/**
 * The workload's certificate (with the SPIFFE ID as URI SAN), its key and the mesh roots.
 * The trust domain of that SPIFFE ID is the mesh's: peers must be in it.
 */
export interface ProxyIdentity {
  certPem: string;
  keyPem: string;
  /** PEM bundle of trusted roots */
  rootPem: string;
}

export const MESH_ALPN = ['istio-peer-exchange', 'istio'];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const TRUST_DOMAIN = /^[a-z0-9]([-a-z0-9.]{0,253}[a-z0-9])?$/;
const SPIFFE_WORKLOAD = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/;

/**
 * The TLS context of a workload identity, for both sides. A server that verifies client
 * certificates must name a session id context before it can resume sessions (OpenSSL
 * refuses with "session id context uninitialized" otherwise); sessions then carry the
 * verified client certificate, and a new identity (new context, new ticket keys) ends them.
 */
export function secureContextFor(id: ProxyIdentity): SecureContext {
  return createSecureContext({ cert: id.certPem, key: id.keyPem, ca: id.rootPem, minVersion: 'TLSv1.2', sessionIdContext: 'strait-mesh' });
}

/**
 * The entries of a subjectAltName string as node:tls and X509Certificate write it
 * ("URI:spiffe://..., DNS:x"; a value with special characters is a JSON string).
 */
export function sanEntries(san: string | undefined): { type: string; value: string }[] {
  const out: { type: string; value: string }[] = [];
  if (!san) return out;
  let i = 0;
  while (i < san.length) {
    const colon = san.indexOf(':', i);
    if (colon < 0) break;
    const type = san.slice(i, colon);
    let value: string;
    let next: number;
    if (san[colon + 1] === '"') {
      let j = colon + 2;
      while (j < san.length && san[j] !== '"') j += san[j] === '\\' ? 2 : 1;
      try {
        value = JSON.parse(san.slice(colon + 1, j + 1)) as string;
      } catch {
        value = '';
      }
      next = j + 1;
    } else {
      const end = san.indexOf(', ', colon + 1);
      next = end < 0 ? san.length : end;
      value = san.slice(colon + 1, next);
    }
    out.push({ type, value });
    i = san.startsWith(', ', next) ? next + 2 : next + 1;
  }
  return out;
}

/** URI SANs of a peer certificate as node:tls reports it. */
export function peerUris(cert: { subjectaltname?: string | undefined } | undefined): string[] {
  return sanEntries(cert?.subjectaltname)
    .filter((e) => e.type === 'URI')
    .map((e) => e.value);
}

export interface WorkloadSpiffeId {
  id: string;
  trustDomain: string;
}

/** The workload SPIFFE ID of a certificate's URI SANs: exactly one, of the ns/sa shape; else a reason. */
export function workloadSpiffeId(uris: readonly string[]): WorkloadSpiffeId | string {
  if (uris.length === 0) return 'no URI SAN (no SPIFFE ID)';
  if (uris.length > 1) return `${uris.length} URI SANs ${JSON.stringify(uris.slice(0, 4))} (a SPIFFE certificate has exactly one)`;
  const id = uris[0] as string;
  const m = SPIFFE_WORKLOAD.exec(id);
  if (!m || !TRUST_DOMAIN.test(m[1] as string) || !DNS_LABEL.test(m[2] as string) || !DNS_LABEL.test(m[3] as string)) {
    return `URI SAN ${JSON.stringify(id.slice(0, 200))} is not a SPIFFE ID spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>`;
  }
  return { id, trustDomain: m[1] as string };
}

/** The trust domain of the proxy's own certificate; a reason when it carries no workload SPIFFE ID. */
export function trustDomainOf(certPem: string): string | { reason: string } {
  let san: string | undefined;
  try {
    san = new X509Certificate(certPem).subjectAltName;
  } catch (err) {
    return { reason: `the certificate does not parse: ${(err as Error).message}` };
  }
  const w = workloadSpiffeId(
    sanEntries(san)
      .filter((e) => e.type === 'URI')
      .map((e) => e.value),
  );
  return typeof w === 'string' ? { reason: w } : w.trustDomain;
}

function mismatch(message: string): Error {
  const err = new Error(message) as NodeJS.ErrnoException;
  err.code = 'ERR_STRAIT_SPIFFE_MISMATCH';
  return err;
}

/**
 * The peer's SPIFFE ID when its (chain-verified) certificate is a mesh peer: one workload
 * SPIFFE ID, one of `allowed` when given, else in `trustDomain`. Otherwise an Error with
 * code ERR_STRAIT_SPIFFE_MISMATCH (counted as bad-peer-identity).
 */
export function meshPeerIdentity(
  cert: { subjectaltname?: string | undefined } | undefined,
  trustDomain: string,
  allowed?: ReadonlySet<string>,
): string | Error {
  const w = workloadSpiffeId(peerUris(cert));
  if (typeof w === 'string') return mismatch(`peer certificate: ${w}`);
  if (allowed !== undefined) {
    return allowed.has(w.id) ? w.id : mismatch(`peer SPIFFE ID ${JSON.stringify(w.id)} is not one of ${JSON.stringify([...allowed])}`);
  }
  return w.trustDomain === trustDomain
    ? w.id
    : mismatch(`peer SPIFFE ID ${JSON.stringify(w.id)} is not in the mesh's trust domain ${JSON.stringify(trustDomain)}`);
}

/**
 * A checkServerIdentity for tls.connect: the server must present one of `sans`, or, when
 * the policy names none, any workload SPIFFE ID of `trustDomain`.
 */
export function spiffeChecker(sans: readonly string[] | undefined, trustDomain: string): (host: string, cert: PeerCertificate) => Error | undefined {
  const allowed = sans && sans.length > 0 ? new Set(sans) : undefined;
  return (_host: string, cert: PeerCertificate) => {
    const r = meshPeerIdentity(cert, trustDomain, allowed);
    return typeof r === 'string' ? undefined : r;
  };
}
