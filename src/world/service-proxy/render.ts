// The node's service proxy, as kube-proxy's nftables mode builds it: one table with a
// verdict map from ClusterIP . protocol . port to a per-service chain, which picks an
// endpoint chain at random (numgen) and DNATs. Hairpin traffic (a pod reaching itself
// through its Service) is marked and masqueraded. Services without endpoints are
// rejected. The whole table is replaced in one nft transaction.
//
// Only typed values go into the script (Ipv4 and Port from their parsers, names that are
// DNS-1123 labels), and they are checked again here: a service that does not pass is
// refused (left out, and named by proxyServiceProblem), never escaped into the script.
// Two services that claim the same ClusterIP . protocol . port: the first (in the given
// order) keeps it, the other is left out, so one conflict never fails the whole table.
import { parseIpv4, parsePort, type Ipv4, type Port } from '../../base/config/index.js';

export interface ProxyEndpoint {
  ip: Ipv4;
  port: Port;
}

export interface ProxyServicePort {
  protocol: 'TCP' | 'UDP';
  port: Port;
  endpoints: ProxyEndpoint[];
}

export interface ProxyService {
  namespace: string;
  name: string;
  clusterIP: Ipv4;
  ports: ProxyServicePort[];
}

export const PROXY_TABLE = 'strait-proxy';
const MASQ_MARK = '0x4000';
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Why this service cannot be rendered, or undefined when it can. */
export function proxyServiceProblem(svc: ProxyService): string | undefined {
  if (typeof svc.namespace !== 'string' || !LABEL.test(svc.namespace)) return `namespace ${JSON.stringify(svc.namespace)} is not a DNS-1123 label`;
  if (typeof svc.name !== 'string' || !LABEL.test(svc.name)) return `name ${JSON.stringify(svc.name)} is not a DNS-1123 label`;
  if (parseIpv4(svc.clusterIP) !== svc.clusterIP) return `clusterIP ${JSON.stringify(svc.clusterIP)} is not an IPv4 address`;
  if (!Array.isArray(svc.ports)) return 'ports is not a list';
  for (const p of svc.ports) {
    if (p.protocol !== 'TCP' && p.protocol !== 'UDP') return `protocol ${JSON.stringify(p.protocol)} is not TCP or UDP`;
    if (parsePort(p.port) !== p.port) return `port ${JSON.stringify(p.port)} is not from 1 to 65535`;
    if (!Array.isArray(p.endpoints)) return 'endpoints is not a list';
    for (const e of p.endpoints) {
      if (parseIpv4(e.ip) !== e.ip) return `endpoint address ${JSON.stringify(e.ip)} is not an IPv4 address`;
      if (parsePort(e.port) !== e.port) return `endpoint port ${JSON.stringify(e.port)} is not from 1 to 65535`;
    }
  }
  return undefined;
}

/** nft script that replaces the proxy table with exactly these services (those that can be rendered) */
export function renderProxyRules(services: ProxyService[]): string {
  const map: string[] = [];
  const rejects: string[] = [];
  const chains: string[] = [];
  // the first service (in the caller's order) that claims a ClusterIP . protocol . port keeps it
  const owner = new Map<string, ProxyService>();
  const valid = services.filter((svc) => proxyServiceProblem(svc) === undefined);
  for (const svc of valid) {
    for (const p of svc.ports) {
      const key = `${svc.clusterIP} . ${p.protocol.toLowerCase()} . ${p.port}`;
      if (!owner.has(key)) owner.set(key, svc);
    }
  }
  const sorted = [...valid].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  const done = new Set<string>();
  for (const svc of sorted) {
    for (const p of svc.ports) {
      const proto = p.protocol.toLowerCase();
      const key = `${svc.clusterIP} . ${proto} . ${p.port}`;
      if (owner.get(key) !== svc || done.has(key)) continue;
      done.add(key);
      const chain = `svc_${svc.namespace}_${svc.name}_${proto}_${p.port}`;
      if (p.endpoints.length === 0) {
        rejects.push(key);
        continue;
      }
      map.push(`${key} : goto ${chain}`);
      const eps = p.endpoints.map((ep, i) => ({ ep, chain: `${chain}_ep${i}` }));
      if (eps.length === 1) chains.push(`  chain ${chain} {\n    goto ${(eps[0] as { chain: string }).chain}\n  }`);
      else {
        const arms = eps.map((e, i) => `${i} : goto ${e.chain}`).join(', ');
        chains.push(`  chain ${chain} {\n    numgen random mod ${eps.length} vmap { ${arms} }\n  }`);
      }
      for (const e of eps) {
        chains.push(
          `  chain ${e.chain} {\n    ip saddr ${e.ep.ip} meta mark set meta mark | ${MASQ_MARK}\n    meta l4proto ${proto} dnat to ${e.ep.ip}:${e.ep.port}\n  }`,
        );
      }
    }
  }
  const lines = [
    `table ip ${PROXY_TABLE} {}`,
    `delete table ip ${PROXY_TABLE}`,
    `table ip ${PROXY_TABLE} {`,
    '  map service-ips {',
    '    type ipv4_addr . inet_proto . inet_service : verdict',
    ...(map.length ? [`    elements = { ${map.join(',\n      ')} }`] : []),
    '  }',
    '  set no-endpoint-services {',
    '    type ipv4_addr . inet_proto . inet_service',
    ...(rejects.length ? [`    elements = { ${rejects.join(', ')} }`] : []),
    '  }',
    '  chain services {',
    '    ip daddr . meta l4proto . th dport vmap @service-ips',
    '  }',
    '  chain nat-prerouting {',
    '    type nat hook prerouting priority dstnat; policy accept;',
    '    jump services',
    '  }',
    '  chain nat-output {',
    '    type nat hook output priority -100; policy accept;',
    '    jump services',
    '  }',
    '  chain nat-postrouting {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    `    meta mark & ${MASQ_MARK} == ${MASQ_MARK} masquerade`,
    '  }',
    '  chain filter-forward {',
    '    type filter hook forward priority filter - 10; policy accept;',
    '    ip daddr . meta l4proto . th dport @no-endpoint-services reject',
    '  }',
    '  chain filter-output {',
    '    type filter hook output priority filter - 10; policy accept;',
    '    ip daddr . meta l4proto . th dport @no-endpoint-services reject',
    '  }',
    ...chains,
    '}',
  ];
  return lines.join('\n') + '\n';
}
