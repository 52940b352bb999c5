// The return path of connections from other clusters that the kernel forwards (Kubernetes
// Services): a remote pod's packet to a ClusterIP leaves the gateway's TUN device on the
// gateway node, where kube-proxy DNATs it to an endpoint pod, often on another node. Two
// things then break what works for pod -> pod:
//   1. kube-proxy marks packets to a ClusterIP from outside the cluster CIDR for
//      masquerading (mark bit 0x4000): the server would see the gateway node's address.
//      The gateway clears that bit for sources in the remote clusters' subnets, just before
//      kube-proxy's masquerading chain (postrouting, priority srcnat - 10), as Submariner's
//      route agent keeps remote CIDRs out of the masquerade.
//   2. The endpoint's reply must pass the gateway node's conntrack to be un-DNATed (its
//      source back to the ClusterIP), but the node agent routes remote subnets into its TUN
//      device and the gateway takes VXLAN in user space. So the agent marks connections from
//      the remote subnets that did not come through its TUN device (ct mark), and their
//      replies (meta mark) are routed by the kernel to the active gateway's node (routing
//      table `table`, rule on `mark`), where conntrack un-DNATs them and the gateway node's
//      own TUN route takes them into the tunnel.
// Programmed with nft and ip (the image's nftables and iproute2), idempotently; removed on stop.
import { execFileSync } from 'node:child_process';
import { E } from '../../../base/errors/index.js';
import { ip } from '../tun/index.js';

/** kube-proxy's masquerade bit (its default masqueradeBit 14) */
export const KUBE_PROXY_MASQUERADE_MARK = 0x4000;
/** the node agent's default mark bit and routing table of these replies (node-agent config); also a passive HA gateway's */
export const AGENT_RETURN_PATH_MARK = 0x2000;
export const AGENT_RETURN_PATH_TABLE = 148;

function nft(script: string): void {
  try {
    execFileSync('nft', ['-f', '-'], { input: script, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { status?: number; stderr?: string };
    throw E.systemTool('nft -f -', e.status ?? 'signal', e.stderr ?? String(err));
  }
}

const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`;
const set = (cidrs: readonly string[]): string => `{ ${cidrs.join(', ')} }`;

/** The nft script of the gateway node: remote sources are not masqueraded. */
export function gatewayReturnPathRules(table: string, remoteSubnets: readonly string[], masqueradeMark = KUBE_PROXY_MASQUERADE_MARK): string {
  return [
    `table ip ${table}`,
    `delete table ip ${table}`,
    `table ip ${table} {`,
    '  chain postrouting {',
    '    type filter hook postrouting priority 90; policy accept;',
    `    ip saddr ${set(remoteSubnets)} meta mark & ${hex(masqueradeMark)} != 0 meta mark set meta mark & ${hex(~masqueradeMark >>> 0)}`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** The nft script of a node agent's node: replies of kernel-forwarded remote connections are marked. */
export function agentReturnPathRules(table: string, tunName: string, remoteSubnets: readonly string[], mark: number): string {
  return [
    `table ip ${table}`,
    `delete table ip ${table}`,
    `table ip ${table} {`,
    '  chain prerouting {',
    '    type filter hook prerouting priority mangle; policy accept;',
    `    ct state new iifname != "${tunName}" ip saddr ${set(remoteSubnets)} ct mark set ct mark | ${hex(mark)}`,
    `    ct direction reply ct mark & ${hex(mark)} != 0 meta mark set meta mark | ${hex(mark)}`,
    '  }',
    '}',
    '',
  ].join('\n');
}

export interface GatewayReturnPath {
  close(): void;
}

/** On the gateway node: keep remote sources out of kube-proxy's masquerade. */
export function programGatewayReturnPath(remoteSubnets: readonly string[], table = 'strait-gateway'): GatewayReturnPath {
  nft(gatewayReturnPathRules(table, remoteSubnets));
  return {
    close: () => {
      try {
        nft(`table ip ${table}\ndelete table ip ${table}\n`);
      } catch {
        /* gone already */
      }
    },
  };
}

/**
 * The next hop towards the gateway node `address`, from `ip route get address`: its router
 * ("via X dev Y") or, on the same link, the gateway node itself ("dev Y": via address), never a
 * bare device (that would ask the link for the remote pod's address, which nobody answers).
 */
export function nextHop(routeGet: string, address: string): string[] {
  const via = /\bvia ([0-9.]+)/.exec(routeGet)?.[1];
  const dev = /\bdev (\S+)/.exec(routeGet)?.[1];
  if (!dev) return [];
  return ['via', via ?? address, 'dev', dev];
}

export interface AgentReturnPathOptions {
  tunName: string;
  remoteSubnets: readonly string[];
  /** the ct/meta mark bit of these connections */
  mark: number;
  /** the routing table of their replies */
  table: number;
  nftTable?: string;
}

export class AgentReturnPath {
  private readonly nftTable: string;
  private gateway = '';

  constructor(private readonly o: AgentReturnPathOptions) {
    this.nftTable = o.nftTable ?? 'strait-agent';
  }

  /**
   * Programmed over what the agent this one replaces left (a rolling update: AgentReturnPath.close
   * is skipped for a waiting successor) without a moment where it is missing: the nft table is
   * replaced in one transaction, the rule added only when absent (never deleted first), the
   * routes replaced. A reply that misses it for a moment goes into the TUN device un-DNATed, and
   * the client's kernel resets the connection (real clusters, a long-lived stream, 2026-11-29).
   */
  start(gatewayAddress: string): void {
    nft(agentReturnPathRules(this.nftTable, this.o.tunName, this.o.remoteSubnets, this.o.mark));
    try {
      ip('rule', 'add', ...this.ruleSelector);
    } catch (err) {
      if (!/File exists/.test(err instanceof Error ? err.message : String(err))) throw err;
    }
    this.setGateway(gatewayAddress);
  }

  private get ruleSelector(): string[] {
    return ['fwmark', `${hex(this.o.mark)}/${hex(this.o.mark)}`, 'lookup', String(this.o.table), 'priority', String(this.o.table)];
  }

  /** The replies go to this gateway node (HA: the active one). */
  setGateway(address: string): void {
    if (address === this.gateway) return;
    const route = ip('route', 'get', address);
    // this node is the gateway's own (no agent runs there in deploy/; the world may): nothing to route
    if (/^local /.test(route)) return;
    const hop = nextHop(route, address);
    if (hop.length === 0) throw E.systemTool(`ip route get ${address}`, 0, 'no route to the gateway node');
    for (const c of this.o.remoteSubnets) ip('route', 'replace', c, ...hop, 'table', String(this.o.table));
    this.gateway = address;
  }

  /**
   * What an agent with the return path on left on this node (its nft table there), removed; the
   * rule and routes only then: a passive HA gateway on the node may use the same mark and table.
   */
  removeLeftover(): void {
    try {
      nft(`delete table ip ${this.nftTable}\n`); // (fails when there is none)
    } catch {
      return;
    }
    this.close();
  }

  close(): void {
    this.gateway = '';
    try {
      nft(`table ip ${this.nftTable}\ndelete table ip ${this.nftTable}\n`);
    } catch {
      /* gone already */
    }
    try {
      ip('rule', 'del', ...this.ruleSelector);
    } catch {
      /* gone */
    }
    try {
      ip('route', 'flush', 'table', String(this.o.table));
    } catch {
      /* empty */
    }
  }
}
