// TLS contexts built from a workload identity, and the SPIFFE check of a server's
// certificate on the client side (Istio clients check URI SANs, never host names).
import { createSecureContext, type PeerCertificate, type SecureContext } from 'node:tls';
import type { ProxyIdentity } from './config.js';

export const MESH_ALPN = ['istio-peer-exchange', 'istio'];

/**
 * The TLS context of a workload identity, for both sides. A server that verifies client
 * certificates must name a session id context before it can resume sessions (OpenSSL
 * refuses with "session id context uninitialized" otherwise); sessions then carry the
 * verified client certificate, and a new identity (new context, new ticket keys) ends them.
 */
export function secureContextFor(id: ProxyIdentity): SecureContext {
  return createSecureContext({ cert: id.certPem, key: id.keyPem, ca: id.rootPem, minVersion: 'TLSv1.2', sessionIdContext: 'strait-mesh' });
}

/** URI SANs of a peer certificate as node:tls reports it ("URI:spiffe://..., DNS:..."). */
export function peerUris(cert: PeerCertificate | undefined): string[] {
  const san = cert?.subjectaltname ?? '';
  const out: string[] = [];
  for (const part of san.split(', ')) if (part.startsWith('URI:')) out.push(part.slice(4));
  return out;
}

/** A checkServerIdentity for tls.connect that accepts the server only if it presents one of `sans`. */
export function spiffeChecker(sans: readonly string[] | undefined): (host: string, cert: PeerCertificate) => Error | undefined {
  if (!sans || sans.length === 0) return acceptAnyMeshPeer;
  const allowed = new Set(sans);
  return (_host: string, cert: PeerCertificate) => {
    const uris = peerUris(cert);
    for (const u of uris) if (allowed.has(u)) return undefined;
    const err = new Error(`server SPIFFE ID ${JSON.stringify(uris)} is not one of ${JSON.stringify([...allowed])}`) as NodeJS.ErrnoException;
    err.code = 'ERR_STRAIT_SPIFFE_MISMATCH';
    return err;
  };
}

function acceptAnyMeshPeer(): undefined {
  return undefined;
}
