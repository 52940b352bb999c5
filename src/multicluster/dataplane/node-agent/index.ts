// Node agent data plane: remote clusters' CIDRs are routed into a TUN device; every
// packet read there is wrapped VXLAN-style (RFC 7348 header, inner Ethernet frame) to
// the cluster's active gateway on UDP 4800; VXLAN frames from the gateway are
// unwrapped and written back into the node through the TUN device.
import { peekDestination } from '../../wire/ipv4/index.js';
import {
  writeHeaders,
  writeExtHeader,
  extRule,
  announceEpoch,
  VXLAN_OVERHEAD,
  ETHERTYPE_ANNOUNCE,
  ETHERTYPE_IPV4,
  ETHERTYPE_VNET,
  ETHERTYPE_STRAIT,
  AGENT_MAC,
  GATEWAY_MAC,
  EXT_HEADER,
  EXT_HELLO,
  EXT_HELLO_ACK,
  EXT_FRAGMENT,
  EXT_FEATURE_FRAGMENTS,
  EXT_MAX_FRAGMENTS,
} from '../../wire/vxlan/index.js';
import { segmentVnet, type SegmentSink } from '../../wire/tunnel/index.js';
import { TunDevice, routeInto, vnetHdrIsPlain, VNET_HDR_LEN } from '../tun/index.js';
import { AgentReturnPath } from '../return-path/index.js';
import { PeerHealth, lossText } from '../tunnel/index.js';
import { UdpTransport } from '../udp/index.js';
import { Handover } from '../handover/index.js';
import { ipv4ToInt } from '../../../base/config/index.js';
import { native } from '../../../platform/native/index.js';
import { parseNodeAgentConfig, type NodeAgentConfig } from './config.js';

export { parseNodeAgentConfig, type NodeAgentConfig } from './config.js';

/** Slots of the native pump's counters (native/src/pump.c, written by its thread). */
const P_TX_PACKETS = 0;
const P_TX_BYTES = 1;
const P_SUPER = 2;
const P_FRAGMENTS = 3;
const P_MALFORMED = 4;
const P_SEND_ERRORS = 5;
const P_READS = 6;
/** bytes read from the device (slot 7) */
const PUMP_COUNTERS = 8;

export interface NodeAgentDrops {
  malformed: number;
  auth: number;
  not_ipv4: number;
  tun_full: number;
}

/** The agent's counters as shown (metrics, status JSON): JS's counts plus the native pump's. */
export interface NodeAgentTotals {
  txPackets: number;
  txBytes: number;
  rxPackets: number;
  rxBytes: number;
  superPackets: number;
  fragments: number;
  segmented: number;
  drops: NodeAgentDrops;
  gatewaySwitches: number;
  /** native pump: TUN reads, and sends that failed (after waiting out a full socket buffer) */
  pumpReads: number;
  pumpSendErrors: number;
}

/**
 * JS's own counts (plain numbers, added to per packet) and the native pump's
 * (a Float64Array its thread adds to). They are summed only where they are read:
 * `totals()` (metrics at scrape time) and `toJSON()` (the status page).
 */
export class NodeAgentCounters {
  txPackets = 0;
  txBytes = 0;
  rxPackets = 0;
  rxBytes = 0;
  /** super-packets sent in extension fragments / cut into plain packets here (gateway without fragments) */
  superPackets = 0;
  fragments = 0;
  segmented = 0;
  /** not_ipv4: frames with another EtherType (a kernel vxlan peer sends IPv6 ND, ARP) */
  readonly drops: NodeAgentDrops = { malformed: 0, auth: 0, not_ipv4: 0, tun_full: 0 };
  /** HA: announcements followed (the active gateway moved) */
  gatewaySwitches = 0;
  /** the native pump's counters (PUMP_COUNTERS doubles), added to by its thread */
  declare readonly pump: Float64Array;

  constructor() {
    Object.defineProperty(this, 'pump', { value: new Float64Array(PUMP_COUNTERS), enumerable: false });
  }

  /** JS's counts plus the pump's. */
  totals(): NodeAgentTotals {
    const p = this.pump;
    return {
      txPackets: this.txPackets + (p[P_TX_PACKETS] as number),
      txBytes: this.txBytes + (p[P_TX_BYTES] as number),
      rxPackets: this.rxPackets,
      rxBytes: this.rxBytes,
      superPackets: this.superPackets + (p[P_SUPER] as number),
      fragments: this.fragments + (p[P_FRAGMENTS] as number),
      segmented: this.segmented,
      drops: { ...this.drops, malformed: this.drops.malformed + (p[P_MALFORMED] as number) },
      gatewaySwitches: this.gatewaySwitches,
      pumpReads: p[P_READS] as number,
      pumpSendErrors: p[P_SEND_ERRORS] as number,
    };
  }

  toJSON(): NodeAgentTotals {
    return this.totals();
  }
}

/**
 * hello to the gateway every 500 ms: the answer (hello-ack, echoing the hello's id) is the
 * VXLAN leg's health probe; no answer for 2 s: the leg is broken (docs/faults.md)
 */
const HELLO_MS = 500;
const LEG_ERROR_AFTER_MS = 2000;

/** The agent's view of its VXLAN leg to the active gateway, from answered hellos. */
export interface GatewayLeg {
  gateway: string;
  /** ok: a hello answered within 2 s; broken: none; unknown: no hello due yet */
  status: 'ok' | 'broken' | 'unknown';
  reason: string;
  rttAvgMs: number | null;
  loss: string;
  lastAnsweredAgoMs: number | null;
}
/** ... or sooner while super-packets are being cut in software */
const HELLO_RETRY_MS = 100;

export class NodeAgent implements SegmentSink {
  readonly counters = new NodeAgentCounters();
  private sock: UdpTransport | undefined;
  private tun: TunDevice | undefined;
  private returnPath: AgentReturnPath | undefined;
  private gatewayAddress: string;
  private gatewayPort: number;
  private readonly vni: number;
  /** HA: every gateway node of the cluster (the configured one and its standbys) */
  private readonly gateways: Set<string>;
  /** HA: epoch (lease transitions) of the last announcement followed */
  gatewayEpoch = -1;
  /** called when an announcement moved the agent to another gateway */
  onGatewayChange: ((address: string, epoch: number) => void) | undefined;
  /** called when the native pump failed to start (the JS path carries on; retried at the next hello-ack) */
  onPumpError: ((err: unknown) => void) | undefined;

  /** [VXLAN + Ethernet header, payload] reused for every packet (the payload slot is replaced) */
  private readonly partsIpv4: [Buffer, Buffer];
  private readonly partsVnet: [Buffer, Buffer];
  private readonly partsFrag: Buffer[];
  private readonly extHeader = Buffer.alloc(EXT_HEADER);
  private readonly hdrStrait: Buffer;
  /** the active gateway answered our hello: it takes super-packet fragments */
  private gatewayFragments = false;
  private helloAt = 0;
  private helloId = 0;
  /** pump starts failed in a row, and the hello id current at the last failure (retries back off) */
  private pumpFailures = 0;
  private pumpFailedAtHello = 0;
  /** answered hellos: the leg's RTT, loss and last answer (monotonic ms) */
  private readonly leg = new PeerHealth({ probeMs: HELLO_MS, errorAfterMs: LEG_ERROR_AFTER_MS, window: 20, mismatchHoldMs: 0 });
  private legSince = performance.now();
  private msgId = 0;
  private helloTimer: NodeJS.Timeout | undefined;
  private segScratch: Buffer | undefined;
  /** bytes of super-packet per fragment frame */
  private readonly fragSize: number;
  /**
   * The native pump (native/src/pump.c) sends TUN -> VXLAN on its own thread while the
   * active gateway takes fragments: `pumpTarget` is where it sends ('' when it does not run).
   * STRAIT_AGENT_PUMP=0 keeps every packet on the JS path.
   */
  private pumpTarget = '';
  private pumpEnabled = process.env['STRAIT_AGENT_PUMP'] !== '0';
  private stopped = false;

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
    this.hdrStrait = Buffer.alloc(VXLAN_OVERHEAD);
    writeHeaders(this.hdrStrait, 0, this.vni, GATEWAY_MAC, AGENT_MAC, ETHERTYPE_STRAIT);
    this.partsFrag = [this.hdrStrait, this.extHeader, this.extHeader];
    this.fragSize = config.vxlan.mtu - 28 - VXLAN_OVERHEAD - EXT_HEADER;
  }

  /** True once the active gateway announced that it reassembles super-packet fragments. */
  get gatewayTakesFragments(): boolean {
    return this.gatewayFragments;
  }

  get vxlanPort(): number {
    return this.sock?.port ?? 0;
  }

  get tunName(): string | undefined {
    return this.tun?.name;
  }

  /**
   * `handover`: wait for the agent this one replaces to let go of the node's VXLAN port and
   * TUN device (a rolling update with maxSurge; src/multicluster/dataplane/handover).
   */
  async start(handover: Handover = new Handover('node agent')): Promise<void> {
    const c = this.config;
    this.sock = await handover.open(`UDP ${c.vxlan.port}`, () => UdpTransport.bind(c.vxlan.listen, c.vxlan.port, (m, a, p) => this.fromGateway(m, a, p)));
    const sock = this.sock;
    this.tun = await handover
      .open(`TUN device ${c.tun.name}`, () => TunDevice.open(c.tun.name, (buf, off, len) => this.fromNode(buf, off, len), { offload: c.tun.offload }))
      .catch(async (err: unknown) => {
        await sock.close();
        throw err;
      });
    // the return path before the routes into the TUN device: a reply of a kernel-forwarded
    // connection that meets the route alone goes into the tunnel un-DNATed, and the client's
    // kernel resets that connection
    const returnPath = new AgentReturnPath({
      tunName: this.tun.name,
      remoteSubnets: c.remoteSubnets,
      mark: c.kubeProxyReturnPath.mark,
      table: c.kubeProxyReturnPath.table,
    });
    if (c.kubeProxyReturnPath.enabled) {
      this.returnPath = returnPath;
      this.returnPath.start(this.gatewayAddress);
    } else {
      // off: one left by the agent this one replaced (with it on) goes now
      returnPath.removeLeftover();
    }
    routeInto(this.tun.name, c.remoteSubnets, { mtu: c.tun.mtu });
    // hellos always: they ask for fragments (offload) and probe the VXLAN leg
    this.hello();
    this.helloTimer = setInterval(() => this.helloTick(), HELLO_MS);
    this.helloTimer.unref();
  }

  /** The VXLAN leg to the active gateway, from the answers to this agent's hellos. */
  gatewayLeg(): GatewayLeg {
    const now = performance.now();
    const st = this.leg.stats();
    const base = {
      gateway: `${this.gatewayAddress}:${this.gatewayPort}`,
      rttAvgMs: st?.avgMs ?? null,
      loss: lossText(this.leg.loss(now)),
      lastAnsweredAgoMs: this.leg.lastAnsweredAt >= 0 ? Math.round(now - this.leg.lastAnsweredAt) : null,
    };
    if (this.leg.answering(now)) return { ...base, status: 'ok', reason: '' };
    const quiet = now - (this.leg.lastAnsweredAt >= 0 ? this.leg.lastAnsweredAt : this.legSince);
    if (quiet < LEG_ERROR_AFTER_MS) return { ...base, status: 'unknown', reason: '' };
    return { ...base, status: 'broken', reason: `no answer from the gateway ${base.gateway} to this node's VXLAN hellos for ${Math.round(quiet)} ms` };
  }

  /** HA: the cluster's active gateway changed. */
  setGateway(address: string, port = 4800): void {
    if (address !== this.gatewayAddress || port !== this.gatewayPort) {
      this.gatewayFragments = false;
      this.pumpFailures = 0; // a new gateway: a failed start is retried at its first answer
      this.leg.reset();
      this.legSince = performance.now();
    }
    this.gatewayAddress = address;
    this.gatewayPort = port;
    this.returnPath?.setGateway(address);
    this.syncPump(); // a new gateway gets plain frames (JS path) until it answers the hello
    if (this.config.tun.offload && !this.gatewayFragments) this.hello();
  }

  /** True while the native pump carries TUN -> VXLAN (read by tests and the status page). */
  get pumping(): boolean {
    return this.pumpTarget !== '';
  }

  /**
   * Run the native pump exactly when every send it would make is what fromNode() would
   * send: offload on, the active gateway takes fragments, the batched UDP transport.
   * Stop it (the JS reader resumes) otherwise, and restart it when the gateway moved.
   */
  private syncPump(): void {
    const sock = this.sock;
    const tun = this.tun;
    const target = `${this.gatewayAddress}:${this.gatewayPort}`;
    const want =
      this.pumpEnabled &&
      !this.stopped &&
      this.config.tun.offload &&
      this.gatewayFragments &&
      sock !== undefined &&
      sock.nativeFd >= 0 &&
      tun !== undefined &&
      ipv4ToInt(this.gatewayAddress) !== undefined;
    if (this.pumpTarget !== '' && (!want || this.pumpTarget !== target)) {
      const id = native().pumpStop(tun?.fd ?? -1);
      if (id >= 0) this.msgId = id >>> 0;
      this.pumpTarget = '';
    }
    if (!want) this.pumpFailures = 0; // nothing to retry while the pump is not wanted
    if (!want || this.pumpTarget !== '') return;
    // JS's pending datagrams are handed to the socket first; a large one the transport's
    // writer thread still holds may leave after the pump's first datagrams (a reordering
    // between messages, never within one: each message is sent whole by one side)
    sock.flush();
    const pumpStart = native().pumpStart;
    if (typeof pumpStart !== 'function') {
      this.pumpEnabled = false; // an addon without the pump: the JS path carries everything
      return;
    }
    try {
      pumpStart(
        tun.fd,
        sock.nativeFd,
        this.partsIpv4[0],
        this.partsVnet[0],
        this.hdrStrait,
        this.fragSize,
        this.config.vxlan.mtu - 28,
        ipv4ToInt(this.gatewayAddress) ?? -1,
        this.gatewayPort,
        this.msgId,
        this.counters.pump,
      );
      this.pumpTarget = target;
      this.pumpFailures = 0;
    } catch (err) {
      // EBUSY, EMFILE, ENOMEM...: the JS path carries on; a later hello-ack (backing off) or HA move retries
      this.pumpFailures++;
      this.pumpFailedAtHello = this.helloId;
      this.onPumpError?.(err);
    }
  }

  private helloTick(): void {
    if (Date.now() - this.helloAt >= HELLO_MS - 50) this.hello();
  }

  /** Ask the gateway whether it reassembles super-packet fragments (a kernel vxlan device drops this frame). */
  private hello(): void {
    const sock = this.sock;
    if (sock === undefined) return;
    this.helloAt = Date.now();
    const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + EXT_HEADER);
    this.hdrStrait.copy(out, 0);
    this.helloId = (this.helloId + 1) >>> 0;
    this.leg.probeSent(this.helloId, performance.now());
    writeExtHeader(out, VXLAN_OVERHEAD, EXT_HELLO, 0, 0, 0, this.helloId, 0);
    sock.send(out, this.gatewayPort, this.gatewayAddress);
  }

  /**
   * `successorWaiting`: an agent that replaces this one on the node (a rolling update) is
   * waiting for it; the return path is then left to it, which programs it again over what it
   * finds. Else it goes, after the TUN device (and its routes): a reply routed into a TUN
   * device without it would leave un-DNATed and reset its connection.
   */
  async stop(successorWaiting: () => Promise<boolean> = () => Promise.resolve(false)): Promise<void> {
    if (this.helloTimer) clearInterval(this.helloTimer);
    this.stopped = true;
    // asked before the TUN device goes (answered while this agent still holds the node's
    // ports, so the successor is still waiting), awaited after: no added gap
    const keep = this.returnPath ? successorWaiting().catch(() => false) : Promise.resolve(false);
    this.syncPump();
    this.tun?.close();
    if (this.returnPath && !(await keep)) this.returnPath.close();
    await this.sock?.close();
  }

  /** A packet the node routed into the TUN device (destination in a remote cluster). */
  private fromNode(buf: Buffer, off: number, len: number, plain = false): void {
    let etherType = ETHERTYPE_IPV4;
    if (this.config.tun.offload && !plain) {
      if (len > VNET_HDR_LEN && vnetHdrIsPlain(buf, off)) {
        off += VNET_HDR_LEN;
        len -= VNET_HDR_LEN;
      } else if (this.gatewayFragments) {
        etherType = ETHERTYPE_VNET; // virtio_net_hdr + super-packet, for a strait gateway
        if (VXLAN_OVERHEAD + len > this.config.vxlan.mtu - 28) {
          this.sendFragments(buf, off, len);
          return;
        }
      } else {
        // a gateway that takes plain frames only (kernel vxlan, or not answered yet):
        // ask again soon (a hello lost at start-up must not keep us here for a second)
        if (Date.now() - this.helloAt >= HELLO_RETRY_MS) this.hello();
        this.segScratch ??= Buffer.allocUnsafe(65536);
        try {
          this.counters.segmented++;
          segmentVnet(buf, off, len, this.segScratch, this);
        } catch {
          this.counters.drops.malformed++;
        }
        return;
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

  /** SegmentSink: one plain IPv4 packet cut from a super-packet. */
  segment(buf: Buffer, off: number, len: number): void {
    this.fromNode(buf, off, len, true);
  }

  /** A virtio_net_hdr + super-packet in fragments of fragSize bytes (one VXLAN datagram each). */
  private sendFragments(buf: Buffer, off: number, len: number): void {
    const sock = this.sock;
    if (sock === undefined) return;
    const size = this.fragSize;
    const count = Math.ceil(len / size);
    if (count > EXT_MAX_FRAGMENTS) {
      this.counters.drops.malformed++;
      return;
    }
    const id = (this.msgId = (this.msgId + 1) >>> 0);
    this.counters.txPackets++;
    this.counters.txBytes += len;
    this.counters.superPackets++;
    this.counters.fragments += count;
    for (let i = 0; i < count; i++) {
      const start = off + i * size;
      const end = start + size < off + len ? start + size : off + len;
      if (sock.batched) {
        // copied at once by the batched transport: the header and parts can be reused
        writeExtHeader(this.extHeader, 0, EXT_FRAGMENT, i, count, 0, id, size);
        this.partsFrag[2] = buf.subarray(start, end);
        sock.send(this.partsFrag, this.gatewayPort, this.gatewayAddress);
      } else {
        const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + EXT_HEADER + end - start);
        this.hdrStrait.copy(out, 0);
        writeExtHeader(out, VXLAN_OVERHEAD, EXT_FRAGMENT, i, count, 0, id, size);
        buf.copy(out, VXLAN_OVERHEAD + EXT_HEADER, start, end);
        sock.send(out, this.gatewayPort, this.gatewayAddress);
      }
    }
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
    if (etherType === ETHERTYPE_STRAIT) {
      if (extRule(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD) === '' && msg[VXLAN_OVERHEAD] === EXT_HELLO_ACK) {
        this.leg.probeAnswered(msg.readUInt32BE(VXLAN_OVERHEAD + 4), performance.now());
        const fragments = ((msg[VXLAN_OVERHEAD + 3] as number) & EXT_FEATURE_FRAGMENTS) !== 0;
        // the pump follows a change at once; a pump that failed to start is retried at the next
        // answer, then after 2, 4, 8, 16 and at most 20 answers (10 s)
        const retry = this.pumpFailures > 0 && this.helloId - this.pumpFailedAtHello >= Math.min(20, 2 ** (this.pumpFailures - 1));
        if (fragments !== this.gatewayFragments || retry) {
          this.gatewayFragments = fragments;
          this.syncPump();
        }
      } else {
        this.counters.drops.malformed++;
      }
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
    this.setGateway(address, this.gatewayPort); // a new gateway: ask it again for fragments
    this.counters.gatewaySwitches++;
    this.onGatewayChange?.(address, epoch);
  }
}

/** Validate `config` and start a node agent data plane. */
export async function startNodeAgent(config: unknown, handover?: Handover): Promise<NodeAgent> {
  const a = new NodeAgent(parseNodeAgentConfig(config));
  await a.start(handover);
  return a;
}
