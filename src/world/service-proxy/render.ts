// The node's service proxy, as kube-proxy's nftables mode builds it: one table with a
// verdict map from ClusterIP . protocol . port to a per-service chain, which picks an
// endpoint chain at random (numgen) and DNATs. Hairpin traffic (a pod reaching itself
// through its Service) is marked and masqueraded. Services without endpoints are
// rejected. The whole table is replaced in one nft transaction.

export interface ProxyEndpoint {
  ip: string;
  port: number;
}

export interface ProxyServicePort {
  protocol: 'TCP' | 'UDP';
  port: number;
  endpoints: ProxyEndpoint[];
}

export interface ProxyService {
  namespace: string;
  name: string;
  clusterIP: string;
  ports: ProxyServicePort[];
}

export const PROXY_TABLE = 'strait-proxy';
const MASQ_MARK = '0x4000';

const safe = (s: string): string => s.replace(/[^a-zA-Z0-9_.-]/g, '_');

/** nft script that replaces the proxy table with exactly these services */
export function renderProxyRules(services: ProxyService[]): string {
  const map: string[] = [];
  const rejects: string[] = [];
  const chains: string[] = [];
  const sorted = [...services].sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  for (const svc of sorted) {
    for (const p of svc.ports) {
      const proto = p.protocol.toLowerCase();
      const key = `${svc.clusterIP} . ${proto} . ${p.port}`;
      const chain = `svc_${safe(svc.namespace)}_${safe(svc.name)}_${proto}_${p.port}`;
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
        chains.push(`  chain ${e.chain} {\n    ip saddr ${e.ep.ip} meta mark set meta mark | ${MASQ_MARK}\n    meta l4proto ${proto} dnat to ${e.ep.ip}:${e.ep.port}\n  }`);
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
