// Node agent data plane: remote clusters' CIDRs are routed into a TUN device; every
// packet read there is wrapped VXLAN-style (RFC 7348 header, inner Ethernet frame) to
// the cluster's active gateway on UDP 4800; VXLAN frames from the gateway are
// unwrapped and written back into the node through the TUN device.
import { peekDestination } from '../../wire/ipv4/index.js';
import { writeHeaders, VXLAN_OVERHEAD, ETHERTYPE_IPV4, ETHERTYPE_VNET, AGENT_MAC, GATEWAY_MAC } from '../../wire/vxlan/index.js';
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
}

export class NodeAgent {
  readonly counters = new NodeAgentCounters();
  private sock: UdpTransport | undefined;
  private tun: TunDevice | undefined;
  private gatewayAddress: string;
  private gatewayPort: number;
  private readonly vni: number;

  constructor(readonly config: Readonly<NodeAgentConfig>) {
    this.gatewayAddress = config.gateway.address;
    this.gatewayPort = config.gateway.port;
    this.vni = config.vxlan.vni;
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
    // one copy into a pooled buffer: the read buffer is reused for the next packet
    // while the kernel may still hold this datagram
    const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + len);
    writeHeaders(out, 0, this.vni, GATEWAY_MAC, AGENT_MAC, etherType);
    buf.copy(out, VXLAN_OVERHEAD, off, off + len);
    this.counters.txPackets++;
    this.counters.txBytes += len;
    this.sock?.send(out, this.gatewayPort, this.gatewayAddress);
  }

  /** A VXLAN frame from the gateway: unwrap into the node. */
  private fromGateway(msg: Buffer, address: string, _port: number): void {
    if (address !== this.gatewayAddress) {
      // only the active gateway may inject packets into this node
      this.counters.drops.auth++;
      return;
    }
    const len = msg.length;
    if (len < VXLAN_OVERHEAD || ((msg[0] as number) & 0x08) === 0 || msg.readUIntBE(4, 3) !== this.vni) {
      this.counters.drops.malformed++;
      return;
    }
    if (msg.readUInt16BE(20) !== ETHERTYPE_IPV4 || len < VXLAN_OVERHEAD + 20) {
      this.counters.drops.not_ipv4++;
      return;
    }
    this.counters.rxPackets++;
    this.counters.rxBytes += len - VXLAN_OVERHEAD;
    if (this.tun && !this.tun.writePacket(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD)) this.counters.drops.tun_full++;
  }
}

/** Validate `config` and start a node agent data plane. */
export async function startNodeAgent(config: unknown): Promise<NodeAgent> {
  const a = new NodeAgent(parseNodeAgentConfig(config));
  await a.start();
  return a;
}
