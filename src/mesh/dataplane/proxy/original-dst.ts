// The original destination of a redirected connection (SO_ORIGINAL_DST through the C
// addon), and the nftables rules that redirect a pod's traffic to its sidecar, as
// istio-iptables does: inbound TCP (prerouting) to the inbound port, outbound TCP
// (output) to the outbound port, except the proxy's own traffic (its uid) and loopback.
import type { Socket } from 'node:net';
import { E } from '../../../base/errors/index.js';
import { native } from '../../../platform/native/index.js';
import type { Address } from './sidecar.js';

export function originalDst(sock: Socket): Address {
  const fd = (sock as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw E.meshOrigDst('the socket has no file descriptor');
  try {
    const r = native()['getOriginalDst']?.(fd) as { address: string; port: number } | undefined;
    if (!r) throw new Error('the C addon has no getOriginalDst');
    return { host: r.address, port: r.port };
  } catch (err) {
    throw E.meshOrigDst((err as Error).message);
  }
}

export interface RedirectRules {
  /** nftables table name (inet family), default strait_sidecar */
  table?: string;
  inboundPort: number;
  outboundPort: number;
  /** uid the proxy runs as; its own connections are not redirected (Istio: 1337) */
  proxyUid: number;
  /** inbound ports that bypass the proxy (health checks, metrics) */
  excludeInboundPorts?: number[];
  /** outbound destination ports that bypass the proxy */
  excludeOutboundPorts?: number[];
}

/** An `nft -f` script for the pod's network namespace. */
export function sidecarRedirectRules(r: RedirectRules): string {
  const t = r.table ?? 'strait_sidecar';
  const exIn = r.excludeInboundPorts?.length ? `    tcp dport { ${r.excludeInboundPorts.join(', ')} } return\n` : '';
  const exOut = r.excludeOutboundPorts?.length ? `    tcp dport { ${r.excludeOutboundPorts.join(', ')} } return\n` : '';
  return `table ip ${t} {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "lo" return
${exIn}    tcp dport ${r.inboundPort} return
    meta l4proto tcp redirect to :${r.inboundPort}
  }
  chain output {
    type nat hook output priority -100; policy accept;
    meta skuid ${r.proxyUid} return
    oifname "lo" return
    ip daddr 127.0.0.0/8 return
${exOut}    meta l4proto tcp redirect to :${r.outboundPort}
  }
}
`;
}
