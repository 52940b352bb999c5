// Host names as Istio reads them in DestinationRules (pilot/pkg/model/config.go
// ResolveShortnameToFQDN, pkg/config/host): a name without a dot is short and belongs to
// the rule's namespace; "*" and "*.suffix" are wildcards; an IP stays as written.
import { isIP } from 'node:net';

export const DEFAULT_DOMAIN = 'cluster.local';

export function resolveShortname(host: string, namespace: string, domain = DEFAULT_DOMAIN): string {
  if (host === '' || host === '*' || isIP(host) !== 0) return host;
  if (!host.includes('.')) return `${host}.${namespace}.svc.${domain}`;
  return host;
}

/** Does the (resolved) rule host cover the service host? */
export function hostMatches(ruleHost: string, serviceHost: string): boolean {
  if (ruleHost === serviceHost) return true;
  if (ruleHost === '*') return true;
  if (ruleHost.startsWith('*.')) return serviceHost.endsWith(ruleHost.slice(1));
  return false;
}

/** Higher is more specific: exact names over wildcards, longer wildcards over shorter. */
export function specificity(ruleHost: string): number {
  if (!ruleHost.startsWith('*')) return 1_000_000;
  return ruleHost.length;
}

export function serviceFqdn(name: string, namespace: string, domain = DEFAULT_DOMAIN): string {
  return `${name}.${namespace}.svc.${domain}`;
}
