// The original destination of a redirected connection (SO_ORIGINAL_DST through the C
// addon), and the nftables rules that redirect a pod's traffic to its sidecar, as
// istio-iptables does: inbound TCP (prerouting) to the inbound port, outbound TCP
// (output) to the outbound port, except the proxy's own traffic and loopback. The proxy's
// own traffic is known by its uid (a sidecar runs as 1337) or by the mark on its sockets
// (the node-level proxy runs as root outside the pod and marks what it makes there).
import type { Socket } from 'node:net';
import { E } from '../../../base/errors/index.js';
import { native } from '../../../platform/native/index.js';
import type { Address } from './sidecar.js';

export function originalDst(sock: Socket): Address {
  const fd = (sock as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw E.meshOrigDst('the socket has no file descriptor');
  try {
    const r = native().getOriginalDst(fd);
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
  proxyUid?: number;
  /** SO_MARK of the proxy's own sockets; they are not redirected (the node-level proxy) */
  proxyMark?: number;
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
  const own = [
    ...(r.proxyUid !== undefined ? [`    meta skuid ${r.proxyUid} return\n`] : []),
    ...(r.proxyMark !== undefined ? [`    meta mark 0x${r.proxyMark.toString(16)} return\n`] : []),
  ].join('');
  // without a way to spare the proxy's own connections, they would loop back into it
  if (!own) throw E.meshConfigInvalid('redirect', r, "needs proxyUid or proxyMark (the proxy's own connections must not be redirected)");
  return `table ip ${t} {
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    iifname "lo" return
${exIn}    tcp dport ${r.inboundPort} return
    meta l4proto tcp redirect to :${r.inboundPort}
  }
  chain output {
    type nat hook output priority -100; policy accept;
${own}    oifname "lo" return
    ip daddr 127.0.0.0/8 return
${exOut}    meta l4proto tcp redirect to :${r.outboundPort}
  }
}
`;
}
