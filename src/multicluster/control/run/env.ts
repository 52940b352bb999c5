// The clusterset.local DNS server of the control module in Kubernetes mode, from the environment.
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
