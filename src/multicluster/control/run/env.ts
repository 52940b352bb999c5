// The multicluster settings of the control module in Kubernetes mode, from the environment:
// the clusterset.local DNS server and the clusterset IP.
import { E } from '../../../base/errors/index.js';
import type { ClustersetDnsSettings } from './run.js';

/**
 * The clusterset.local DNS listener from the environment deploy/control.yaml sets:
 * STRAIT_DNS_PORT (default 5353, above 1023: the process has no capabilities; "off": none),
 * STRAIT_DNS_LISTEN (default 0.0.0.0).
 */
export function dnsSettingsFromEnv(env: NodeJS.ProcessEnv): ClustersetDnsSettings | undefined {
  const port = env['STRAIT_DNS_PORT'] ?? '5353';
  if (port === 'off') return undefined;
  const n = Number(port);
  if (!/^[0-9]{1,5}$/.test(port) || n > 65535) throw E.configInvalid('STRAIT_DNS_PORT', port, 'a port number 0-65535, or "off"');
  return { host: env['STRAIT_DNS_LISTEN'] ?? '0.0.0.0', port: n };
}

/**
 * STRAIT_CLUSTERSET_IP: "on" (default) gives every ClusterSetIP ServiceImport a clusterset IP
 * from the cluster's service CIDR (a derived Service the API server allocates and kube-proxy
 * routes); "off": none, and clusterset DNS answers an exporting cluster's ClusterIP.
 */
export function clustersetIPFromEnv(env: NodeJS.ProcessEnv): boolean {
  const v = env['STRAIT_CLUSTERSET_IP'] ?? 'on';
  if (v !== 'on' && v !== 'off') throw E.configInvalid('STRAIT_CLUSTERSET_IP', v, '"on" (a clusterset IP per ClusterSetIP import) or "off"');
  return v === 'on';
}
