// (own component so that proxies load prom-client without the CA and policy code)
// Prometheus exposition of the mesh proxies' plain-integer counters: prom-client reads
// them in collect() at scrape time; the data path never touches prom-client.
import { Counter, Gauge, Registry } from 'prom-client';
import type { IngressMetrics, ProxyMetrics } from '../../dataplane/proxy/index.js';

function counter(reg: Registry, name: string, help: string, labelNames: string[], fill: (c: Counter<string>) => void): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [reg],
    collect(this: Counter<string>) {
      this.reset();
      fill(this);
    },
  });
}

export function registerProxyMetrics(reg: Registry, m: ProxyMetrics): void {
  counter(
    reg,
    'strait_mesh_inbound_accepted_total',
    'Inbound connections accepted by the sidecar, by effective mode and how (plaintext, mtls, tls-passthrough)',
    ['mode', 'how'],
    (c) => {
      for (const [mode, by] of Object.entries(m.accepted)) for (const [how, v] of Object.entries(by)) c.inc({ mode, how }, v);
    },
  );
  counter(
    reg,
    'strait_mesh_inbound_mtls_connections_total',
    'Inbound mTLS connections accepted, by the client\'s SPIFFE ID (source_principal; at most 100 distinct, the rest as "other")',
    ['source_principal'],
    (c) => {
      for (const [source_principal, v] of m.principals) c.inc({ source_principal }, v);
    },
  );
  counter(
    reg,
    'strait_mesh_inbound_reset_total',
    'Inbound connections reset (RST) before reaching the application, by effective mode and reason',
    ['mode', 'reason'],
    (c) => {
      for (const [mode, by] of Object.entries(m.reset)) for (const [reason, v] of Object.entries(by)) c.inc({ mode, reason }, v);
    },
  );
  counter(
    reg,
    'strait_mesh_tls_handshakes_total',
    'mTLS handshakes, by side (server = inbound, client = outbound) and result (ok counts every good one; resumed counts those of them that resumed a session)',
    ['side', 'result'],
    (c) => {
      c.inc({ side: 'server', result: 'ok' }, m.handshakes.serverOk);
      c.inc({ side: 'client', result: 'ok' }, m.handshakes.clientOk);
      c.inc({ side: 'server', result: 'resumed' }, m.handshakes.serverResumed);
      c.inc({ side: 'client', result: 'resumed' }, m.handshakes.clientResumed);
      for (const [side, by] of Object.entries(m.handshakeFailures)) for (const [result, v] of Object.entries(by)) c.inc({ side, result }, v);
    },
  );
  counter(reg, 'strait_mesh_outbound_connections_total', 'Outbound connections, by the TLS mode used', ['tls_mode'], (c) => {
    for (const [tls_mode, v] of Object.entries(m.outbound)) c.inc({ tls_mode }, v);
  });
  counter(reg, 'strait_mesh_upstream_errors_total', 'Connections whose upstream failed, by direction', ['direction'], (c) => {
    for (const [direction, v] of Object.entries(m.upstreamErrors)) c.inc({ direction }, v);
  });
  counter(
    reg,
    'strait_mesh_direct_to_proxy_reset_total',
    "Connections made straight to the proxy's own port (not redirected), reset instead of relayed to the proxy itself, by direction",
    ['direction'],
    (c) => {
      for (const [direction, v] of Object.entries(m.directToProxy)) c.inc({ direction }, v);
    },
  );
  counter(
    reg,
    'strait_mesh_tls_native_relay_total',
    "mTLS connections whose TLS 1.3 records moved to the native relay after the handshake (handoff) or stayed on Node's TLS (fallback); relays that ended cleanly (ended) or with an error (failed)",
    ['event'],
    (c) => {
      c.inc({ event: 'handoff' }, m.tlsRelay.handoffs);
      c.inc({ event: 'fallback' }, m.tlsRelay.fallbacks);
      c.inc({ event: 'ended' }, m.tlsRelay.ended);
      c.inc({ event: 'failed' }, m.tlsRelay.failed);
    },
  );
  counter(reg, 'strait_mesh_config_updates_total', 'Configurations applied at runtime', [], (c) => c.inc(m.configUpdates));
  new Gauge({
    name: 'strait_mesh_certificate_expiry_seconds',
    help: 'Seconds until the workload certificate expires (0 without one)',
    registers: [reg],
    collect(this: Gauge<string>) {
      this.set(m.certExpirySeconds());
    },
  });
}

export function registerIngressMetrics(reg: Registry, m: IngressMetrics): void {
  counter(reg, 'strait_mesh_ingress_requests_total', 'Requests through the ingress gateway, by outcome', ['outcome'], (c) => {
    c.inc({ outcome: 'mtls' }, m.mtlsRequests);
    c.inc({ outcome: 'plaintext' }, m.plaintextRequests);
    c.inc({ outcome: 'no_route' }, m.noRoute);
    c.inc({ outcome: 'upstream_error' }, m.upstreamErrors);
  });
}

export { Registry };
