// Counters of a sidecar or ingress proxy: plain integers, read by prom-client at scrape
// time (src/mesh/control/metrics/index.ts). Labels are fixed small sets, so each counter is a
// field of a plain object.
import { X509Certificate } from 'node:crypto';

export type AcceptReason = 'plaintext' | 'mtls' | 'tls-passthrough';
export type ResetReason = 'plaintext' | 'tls' | 'sniff-timeout' | 'no-identity';
export type HandshakeFailure = 'no-client-cert' | 'expired' | 'untrusted' | 'bad-peer-identity' | 'other';

/** distinct source principals counted by name; the rest under OTHER_PRINCIPAL (bounded label set) */
export const MAX_PRINCIPALS = 100;
export const OTHER_PRINCIPAL = 'other';

export class ProxyMetrics {
  /** inbound connections accepted, by effective mode and how */
  readonly accepted: Record<'STRICT' | 'PERMISSIVE' | 'DISABLE', Record<AcceptReason, number>> = {
    STRICT: { plaintext: 0, mtls: 0, 'tls-passthrough': 0 },
    PERMISSIVE: { plaintext: 0, mtls: 0, 'tls-passthrough': 0 },
    DISABLE: { plaintext: 0, mtls: 0, 'tls-passthrough': 0 },
  };
  /** inbound connections reset (RST) before reaching the application, by mode and reason */
  readonly reset: Record<'STRICT' | 'PERMISSIVE' | 'DISABLE', Record<ResetReason, number>> = {
    STRICT: { plaintext: 0, tls: 0, 'sniff-timeout': 0, 'no-identity': 0 },
    PERMISSIVE: { plaintext: 0, tls: 0, 'sniff-timeout': 0, 'no-identity': 0 },
    DISABLE: { plaintext: 0, tls: 0, 'sniff-timeout': 0, 'no-identity': 0 },
  };
  /**
   * inbound mTLS connections by the client's SPIFFE ID (Istio's source_principal); only
   * identities that passed the trust-domain check get here, at most MAX_PRINCIPALS of them
   */
  readonly principals = new Map<string, number>();
  /** TLS handshakes as server (inbound) and client (outbound); `*Resumed` of them resumed a session */
  readonly handshakes = { serverOk: 0, clientOk: 0, serverResumed: 0, clientResumed: 0 };
  readonly handshakeFailures: Record<'server' | 'client', Record<HandshakeFailure, number>> = {
    server: { 'no-client-cert': 0, expired: 0, untrusted: 0, 'bad-peer-identity': 0, other: 0 },
    client: { 'no-client-cert': 0, expired: 0, untrusted: 0, 'bad-peer-identity': 0, other: 0 },
  };
  /** outbound connections by TLS mode used */
  readonly outbound = { ISTIO_MUTUAL: 0, DISABLE: 0 };
  readonly upstreamErrors = { inbound: 0, outbound: 0 };
  /**
   * mTLS connections whose records went to the native relay after the handshake (handoffs),
   * stayed on Node's TLS (fallbacks), and relays that ended cleanly or with an error
   */
  readonly tlsRelay = { handoffs: 0, fallbacks: 0, ended: 0, failed: 0 };
  /** connections whose original destination was the proxy's own listener (made straight to it), reset */
  readonly directToProxy = { inbound: 0, outbound: 0 };
  configUpdates = 0;
  /** notAfter of the current workload certificate, ms since the epoch (0 = none) */
  certNotAfterMs = 0;

  countPrincipal(id: string): void {
    const n = this.principals.get(id);
    if (n !== undefined) this.principals.set(id, n + 1);
    else if (this.principals.size < MAX_PRINCIPALS) this.principals.set(id, 1);
    else this.principals.set(OTHER_PRINCIPAL, (this.principals.get(OTHER_PRINCIPAL) ?? 0) + 1);
  }

  setCertificate(certPem: string | undefined): void {
    this.certNotAfterMs = certPem ? Date.parse(new X509Certificate(certPem).validTo) : 0;
  }

  /** Seconds until the current certificate expires (negative once expired, 0 without one). */
  certExpirySeconds(now = Date.now()): number {
    return this.certNotAfterMs === 0 ? 0 : Math.floor((this.certNotAfterMs - now) / 1000);
  }
}

/** Map a TLS error to the failure reason counted and reported. */
export function classifyTlsError(err: NodeJS.ErrnoException | Error): HandshakeFailure {
  const code = String((err as NodeJS.ErrnoException).code ?? '') + ' ' + err.message;
  if (/PEER_DID_NOT_RETURN_A_CERTIFICATE|CERTIFICATE_REQUIRED|certificate required/i.test(code)) return 'no-client-cert';
  if (/EXPIRED/i.test(code)) return 'expired';
  if (/UNABLE_TO_VERIFY|SELF_SIGNED|UNKNOWN_CA|unknown ca|bad certificate|DEPTH_ZERO|UNABLE_TO_GET_ISSUER/i.test(code)) return 'untrusted';
  if (/ERR_TLS_CERT_ALTNAME_INVALID|SPIFFE/i.test(code)) return 'bad-peer-identity';
  return 'other';
}
