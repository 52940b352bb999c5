// A clusterset zone's service for DNS tests, from plain strings and numbers (the zone's typed
// values, Ipv4 and Port, come from source.ts in the product): every endpoint ready.
import type { ZoneService } from '../../src/multicluster/control/clusterset-dns/index.js';

export function zoneService(
  name: string,
  clusters: Record<string, { ip: string; hostname?: string }[]>,
  opts: { namespace?: string; headless?: boolean; ports?: { name?: string; protocol: string; port: number }[] } = {},
): ZoneService {
  return {
    namespace: opts.namespace ?? 'default',
    name,
    headless: opts.headless ?? false,
    ports: opts.ports ?? [{ name: 'http', protocol: 'TCP', port: 8080 }],
    clusters: new Map(Object.entries(clusters).map(([c, eps]) => [c, { ports: [], endpoints: eps.map((e) => ({ ...e, ready: true })) }])),
  } as unknown as ZoneService;
}
