// Node agent data plane: remote clusters' CIDRs are routed into a TUN device; every
// packet read there is wrapped VXLAN-style (RFC 7348 header, inner Ethernet frame) to
// the cluster's active gateway on UDP 4800; VXLAN frames from the gateway are
// unwrapped and written back into the node through the TUN device.
import { peekDestination } from '../../wire/ipv4/index.js';
import { writeHeaders, announceEpoch, VXLAN_OVERHEAD, ETHERTYPE_ANNOUNCE, ETHERTYPE_IPV4, ETHERTYPE_VNET, AGENT_MAC, GATEWAY_MAC } from '../../wire/vxlan/index.js';
import { TunDevice, routeInto, vnetHdrIsPlain, VNET_HDR_LEN } from '../tun/index.js';
import { UdpTransport } from '../udp/index.js';
import { parseNodeAgentConfig, type NodeAgentConfig } from './config.js';

export { parseNodeAgentConfig, type NodeAgentConfig } from './config.js';

export class NodeAgentCounters {
  txPackets = 0;
  txBytes = 0;
  rxPackets = 0;
  rxBytes = 0;
  /** not_ipv4: frames with another EtherType (a kernel vxlan peer sends IPv6 ND, ARP) */
  readonly drops = { malformed: 0, auth: 0, not_ipv4: 0, tun_full: 0 };
  /** HA: announcements followed (the active gateway moved) */
  gatewaySwitches = 0;
}

export class NodeAgent {
  readonly counters = new NodeAgentCounters();
  private sock: UdpTransport | undefined;
  private tun: TunDevice | undefined;
  private gatewayAddress: string;
  private gatewayPort: number;
  private readonly vni: number;
  /** HA: every gateway node of the cluster (the configured one and its standbys) */
  private readonly gateways: Set<string>;
  /** HA: epoch (lease transitions) of the last announcement followed */
  gatewayEpoch = -1;
  /** called when an announcement moved the agent to another gateway */
  onGatewayChange: ((address: string, epoch: number) => void) | undefined;

  /** [VXLAN + Ethernet header, payload] reused for every packet (the payload slot is replaced) */
  private readonly partsIpv4: Buffer[];
  private readonly partsVnet: Buffer[];

  constructor(readonly config: Readonly<NodeAgentConfig>) {
    this.gatewayAddress = config.gateway.address;
    this.gatewayPort = config.gateway.port;
    this.vni = config.vxlan.vni;
    this.gateways = new Set([config.gateway.address, ...config.gateway.standby]);
    const h4 = Buffer.alloc(VXLAN_OVERHEAD);
    writeHeaders(h4, 0, this.vni, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_IPV4);
    const hv = Buffer.alloc(VXLAN_OVERHEAD);
    writeHeaders(hv, 0, this.vni, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_VNET);
    this.partsIpv4 = [h4, h4];
    this.partsVnet = [hv, hv];
  }

  get vxlanPort(): number {
    return this.sock?.port ?? 0;
  }

  get tunName(): string | undefined {
    return this.tun?.name;
  }

  async start(): Promise<void> {
    const c = this.config;
    this.sock = await UdpTransport.bind(c.vxlan.listen, c.vxlan.port, (m, a, p) => this.fromGateway(m, a, p));
    this.tun = TunDevice.open(c.tun.name, (buf, off, len) => this.fromNode(buf, off, len), { offload: c.tun.offload });
    routeInto(this.tun.name, c.remoteSubnets, { mtu: c.tun.mtu });
  }

  /** HA: the cluster's active gateway changed. */
  setGateway(address: string, port = 4800): void {
    this.gatewayAddress = address;
    this.gatewayPort = port;
  }

  async stop(): Promise<void> {
    this.tun?.close();
    await this.sock?.close();
  }

  /** A packet the node routed into the TUN device (destination in a remote cluster). */
  private fromNode(buf: Buffer, off: number, len: number): void {
    let etherType = ETHERTYPE_IPV4;
    if (this.config.tun.offload) {
      if (len > VNET_HDR_LEN && vnetHdrIsPlain(buf, off)) {
        off += VNET_HDR_LEN;
        len -= VNET_HDR_LEN;
      } else {
        etherType = ETHERTYPE_VNET; // virtio_net_hdr + super-packet, for an offload gateway
      }
    }
    if (peekDestination(buf, etherType === ETHERTYPE_VNET ? off + VNET_HDR_LEN : off, etherType === ETHERTYPE_VNET ? len - VNET_HDR_LEN : len) < 0) {
      this.counters.drops.malformed++;
      return;
    }
    this.counters.txPackets++;
    this.counters.txBytes += len;
    const sock = this.sock;
    if (sock === undefined) return;
    if (sock.batched) {
      // the batched transport copies at once: a constant header and a view of the read buffer
      const parts = etherType === ETHERTYPE_IPV4 ? this.partsIpv4 : this.partsVnet;
      parts[1] = buf.subarray(off, off + len);
      sock.send(parts, this.gatewayPort, this.gatewayAddress);
      return;
    }
    // node:dgram sends later: one copy, as the read buffer is reused for the next packet
    const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + len);
    writeHeaders(out, 0, this.vni, GATEWAY_MAC, AGENT_MAC, etherType);
    buf.copy(out, VXLAN_OVERHEAD, off, off + len);
    sock.send(out, this.gatewayPort, this.gatewayAddress);
  }

  get gateway(): string {
    return this.gatewayAddress;
  }

  /** A VXLAN frame from the gateway: unwrap into the node. */
  private fromGateway(msg: Buffer, address: string, _port: number): void {
    if (address !== this.gatewayAddress) {
      if (this.gateways.has(address) && msg.length >= VXLAN_OVERHEAD && msg.readUInt16BE(20) === ETHERTYPE_ANNOUNCE) {
        this.announced(msg, address);
        return;
      }
      // only the active gateway may inject packets into this node
      this.counters.drops.auth++;
      return;
    }
    const len = msg.length;
    if (len < VXLAN_OVERHEAD || ((msg[0] as number) & 0x08) === 0 || msg.readUIntBE(4, 3) !== this.vni) {
      this.counters.drops.malformed++;
      return;
    }
    const etherType = msg.readUInt16BE(20);
    if (etherType === ETHERTYPE_ANNOUNCE) {
      this.announced(msg, address);
      return;
    }
    if (etherType !== ETHERTYPE_IPV4 || len < VXLAN_OVERHEAD + 20) {
      this.counters.drops.not_ipv4++;
      return;
    }
    this.counters.rxPackets++;
    this.counters.rxBytes += len - VXLAN_OVERHEAD;
    if (this.tun && !this.tun.writePacket(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD)) this.counters.drops.tun_full++;
  }

  /** HA: a gateway of this cluster says it holds the lease; follow it unless the epoch is older. */
  private announced(msg: Buffer, address: string): void {
    const epoch = announceEpoch(msg);
    if (epoch < 0 || ((msg[0] as number) & 0x08) === 0 || msg.readUIntBE(4, 3) !== this.vni) {
      this.counters.drops.malformed++;
      return;
    }
    if (epoch < this.gatewayEpoch) return;
    this.gatewayEpoch = epoch;
    if (address === this.gatewayAddress) return;
    this.gatewayAddress = address;
    this.counters.gatewaySwitches++;
    this.onGatewayChange?.(address, epoch);
  }
}

/** Validate `config` and start a node agent data plane. */
export async function startNodeAgent(config: unknown): Promise<NodeAgent> {
  const a = new NodeAgent(parseNodeAgentConfig(config));
  await a.start();
  return a;
}
