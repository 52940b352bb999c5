// Gateway data plane: VXLAN endpoint for the cluster's node agents (UDP 4800), PSK
// tunnels to remote gateways (UDP 4500), and a TUN device that injects decrypted
// traffic into the cluster network (or VXLAN back to the node agent that hosts the
// destination). Routing is by destination CIDR; the source address is never touched.
// VXLAN frames are taken only from the cluster's nodes (node-table.ts), and a packet
// from a node only with an inner source in that node's pod CIDRs.
import { readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { systemClock, type Clock } from '../../../base/clock/index.js';
import { cidrContains, intToIpv4, ipv4ToInt, type Cidr } from '../../../base/config/index.js';
import { E } from '../../../base/errors/index.js';
import { peekDestination, peekSource } from '../../wire/ipv4/index.js';
import {
  writeHeaders,
  writeExtHeader,
  extRule,
  encodeAnnounce,
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
  EXT_MAX_BODY,
} from '../../wire/vxlan/index.js';
import { FEATURE_VNET, FEATURE_FRAG, NEXT_IPV4, NEXT_IPV4_VNET, segmentVnet, type SegmentSink } from '../../wire/tunnel/index.js';
import { TunnelEndpoint, Reassembler, nativeSessions, type Peer, type PeerRecord, type TunnelEvent } from '../tunnel/index.js';
import { TunDevice, routeInto, vnetHdrIsPlain, VNET_HDR_LEN } from '../tun/index.js';
import { AGENT_RETURN_PATH_MARK, AGENT_RETURN_PATH_TABLE, AgentReturnPath, programGatewayReturnPath, type GatewayReturnPath } from '../return-path/index.js';
import { Handover } from '../handover/index.js';
import { UdpTransport } from '../udp/index.js';
import { parseGatewayConfig, type GatewayConfig, type GatewayNodeConfig } from './config.js';
import { NodeTable, inPodCidrs, type NodeEntry } from './node-table.js';
import { NativePath, type NativePathStats } from './native-path.js';

export { parseGatewayConfig, haInKubernetes, type GatewayConfig, type GatewayPeerConfig, type GatewayNodeConfig, type GatewayHaConfig } from './config.js';
export { NodeTable, inPodCidrs, type NodeEntry, type NodeInput } from './node-table.js';
export { NativePath, NATIVE_PATH_PEERS, type NativePathStats } from './native-path.js';

export class VxlanCounters {
  rxPackets = 0;
  rxBytes = 0;
  txPackets = 0;
  txBytes = 0;
  malformed = 0;
  /** HA: tunnel packets that reached this gateway while it was passive (dropped) */
  passiveDrops = 0;
  /** HA: announcements sent to the node agents */
  announcements = 0;
  /** HA: tunnel datagrams not sent because the lease was not confirmed in time (fenced) */
  fencedDrops = 0;
  /** extension fragments received from agents, super-packets reassembled from them */
  fragments = 0;
  reassembled = 0;
  /** receive runs (an agent's GSO send) of fragments taken whole, without a call per datagram */
  fragmentRuns = 0;
  hellos = 0;
}

/**
 * HA fencing: a send reads the clock only when it is the first one of an event-loop
 * callback or the FENCE_CHECK_EVERY-th in a row within one; the others use the last answer.
 */
const FENCE_CHECK_EVERY = 64;

/** VXLAN super-packets reassembled at once (all agents together; memory: slots x 64 KiB) */
const VXLAN_REASSEMBLY_SLOTS = 16;
const VXLAN_REASSEMBLY_TIMEOUT_MS = 1000;

/** Endpoint record of this gateway, published to the broker (docs/gateway-and-agent.md). */
export interface EndpointRecord {
  clusterId: string;
  hostname: string;
  endpointIP: string;
  publicIP: string;
  cableDriver: string;
  subnets: string[];
  type: 'local' | 'remote';
}

/** Connection record (subctl show connections): a tunnel peer's record, as Submariner names and prints it. */
export type ConnectionRecord = Pick<
  PeerRecord,
  | 'cluster'
  | 'remoteIP'
  | 'subnets'
  | 'status'
  | 'reason'
  | 'statusMessage'
  | 'lastTransitionTime'
  | 'rttAvgMs'
  | 'latency'
  | 'loss'
  | 'txBytes'
  | 'txPackets'
  | 'rxBytes'
  | 'rxPackets'
  | 'handshakes'
  | 'rekeys'
> & {
  gateway: string;
  nat: 'yes' | 'no';
  cableDriver: string;
  rttAvg: string;
};

export interface GatewayRecord {
  node: string;
  haStatus: 'active' | 'passive';
  summary: string;
  /** the VXLAN legs of the cluster's node agents that have said hello here (active gateway only) */
  nodeLegs?: NodeLeg[];
}

/**
 * A node agent's VXLAN leg as the gateway sees it: `broken` when its hellos (every 500 ms)
 * stopped arriving for 2 s after it had sent some (a killed agent, a broken route or
 * encapsulation on the way); nodes that never said hello are not listed.
 */
export interface NodeLeg {
  address: string;
  status: 'ok' | 'broken';
  message: string;
}

/** no hello from a node agent for this long: its leg is broken */
export const NODE_LEG_ERROR_AFTER_MS = 2000;

export const CABLE_DRIVER = 'strait-psk';

export interface GatewayOptions {
  clock?: Clock;
  /** skip the TUN device (tests without CAP_NET_ADMIN): decrypted packets go to onDeliver */
  noTun?: boolean;
  /** decrypted packets (with a virtio_net_hdr first when `next` is NEXT_IPV4_VNET) */
  onDeliver?: (packet: Buffer, peer: Peer, next: number) => void;
  onEvent?: (ev: TunnelEvent) => void;
  /** a problem worth a log line that does not stop the gateway (HA: the passive node's return path) */
  onWarning?: (message: string) => void;
  /**
   * the bulk data path on a native thread (native-path.ts): default on where it can run
   * (the addon, TUN offload, a TUN device, no onDeliver); false, or STRAIT_GATEWAY_NATIVE=0, keeps it in JS
   */
  nativePath?: boolean;
  /** wait for the gateway this one replaces to let go of the node's ports and TUN device (a rolling update with maxSurge) */
  handover?: Handover;
}

export class Gateway implements SegmentSink {
  readonly config: Readonly<GatewayConfig>;
  readonly tunnel: TunnelEndpoint;
  readonly vxlan = new VxlanCounters();
  private tunnelSock: UdpTransport | undefined;
  private vxlanSock: UdpTransport | undefined;
  private tun: TunDevice | undefined;
  private returnPath: GatewayReturnPath | undefined;
  /**
   * HA with kubeProxyReturnPath: while passive, this node is one of the cluster's others, and
   * replies of Service connections DNATed on the active gateway's node go back there, as a
   * node agent's do (return-path/); `passiveReturnPathTo`: the node it routes them to now.
   */
  private passiveReturnPath: AgentReturnPath | undefined;
  private passiveReturnPathTo: string | undefined;
  /** the cluster's nodes: who may send VXLAN here, and their pod CIDRs */
  private readonly nodes = new NodeTable();
  private readonly vni: number;
  haStatus: 'active' | 'passive';
  /** HA: the lease epoch (transitions) this gateway became active with */
  haEpoch = 0;
  /** HA: underlay address of the active gateway while this one is passive */
  activeAddress: string | undefined;
  /** HA: when this gateway became active (ms since the epoch), for records */
  activeSince: number | undefined;
  /** the announcements' repeats and interval while active: cleared by stop() and a new becomeActive() */
  private announceTimers: NodeJS.Timeout[] = [];
  /** HA: performance.now() after which this gateway may no longer hold the lease; 0 = no fence */
  private fenceAt = 0;
  /** HA: the lease deadline had passed at the last clock read */
  private fenced = false;
  /** HA: the clock was read in the current synchronous run (cleared by a microtask) */
  private fenceFresh = false;
  /** HA: sends since the last clock read */
  private fenceSends = 0;
  /** noticeFenced() is sending: its datagrams pass the fence */
  private fenceNotice = false;
  private readonly fenceClear = (): void => {
    this.fenceFresh = false;
  };
  private tunnelStarted = false;
  private readonly standbyEndpoints: Map<string, Set<string>>;
  /** [VXLAN + Ethernet header to the agents, packet]: reused, the payload slot is replaced */
  private readonly vxlanParts: Buffer[];
  /** super-packets cut from agents' VXLAN extension fragments */
  private readonly vxlanReassembly = new Reassembler(VXLAN_REASSEMBLY_SLOTS, EXT_MAX_BODY, 0, VXLAN_REASSEMBLY_TIMEOUT_MS);
  private readonly clock: Clock;
  private lastAgent = '';
  /** monotonic time of each node agent's last hello (its VXLAN leg's probe) */
  private readonly helloAt = new Map<string, number>();
  private lastAgentInt = 0;
  /** software segmentation (peers without FEATURE_VNET): scratch and the peer being served */
  private segScratch: Buffer | undefined;
  private segPeer: Peer | undefined;
  /** the bulk data path on a native thread, while it runs */
  private nativePath: NativePath | undefined;
  private readonly nativeWanted: boolean;
  /** why the native data path does not run ('' while it runs or before the tunnel starts) */
  nativePathReason = '';

  constructor(
    config: Readonly<GatewayConfig>,
    private readonly opts: GatewayOptions = {},
  ) {
    this.config = config;
    this.vni = config.vxlan.vni;
    const hdr = Buffer.alloc(VXLAN_OVERHEAD);
    writeHeaders(hdr, 0, config.vxlan.vni, AGENT_MAC, GATEWAY_MAC, ETHERTYPE_IPV4);
    this.vxlanParts = [hdr, hdr];
    this.clock = opts.clock ?? systemClock;
    this.nodes.set(config.nodes, config.ha?.members.map((m) => m.address) ?? []);
    this.haStatus = config.ha ? 'passive' : 'active';
    this.standbyEndpoints = new Map(config.peers.map((p) => [p.clusterId, new Set(p.standby.map((a) => `${a}:${p.port}`))]));
    const psk = config.psk ?? readPsk(config.pskFile as string);
    this.nativeWanted =
      (opts.nativePath ?? process.env['STRAIT_GATEWAY_NATIVE'] !== '0') && config.tun.offload && opts.noTun !== true && opts.onDeliver === undefined;
    const sessionCrypto = this.nativeWanted ? nativeSessions() : undefined;
    if (this.nativeWanted && sessionCrypto === undefined) this.nativePathReason = 'the native addon has no tunnel sessions';
    this.tunnel = new TunnelEndpoint({
      clusterId: config.clusterId,
      psk,
      clock: opts.clock ?? systemClock,
      peers: config.peers.map((p) => ({ clusterId: p.clusterId, address: p.endpoint, port: p.port, subnets: p.subnets, alternates: p.standby })),
      limits: config.timers,
      send: (chunks, port, address) => this.sendTunnel(chunks, port, address),
      sendCopies: true,
      deliver: (packet, peer, next) => this.deliver(packet, peer, next),
      features: config.tun.offload ? FEATURE_VNET | FEATURE_FRAG : 0,
      maxDatagram: config.tunnel.mtu - 28,
      ...(sessionCrypto ? { sessionCrypto, onPeerChange: (p: Peer) => this.nativePath?.syncPeer(p), onSync: () => this.nativePath?.fold() } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    });
  }

  /**
   * The cluster's nodes changed (Kubernetes mode: the Node objects). Frames from a node
   * no longer listed are dropped from now on. Throws on a bad CIDR and keeps the old table.
   */
  setNodes(nodes: readonly GatewayNodeConfig[]): void {
    this.nodes.set(nodes, this.config.ha?.members.map((m) => m.address) ?? []);
    this.nativePath?.setNodes(this.nodes.list);
  }

  /** True while the bulk data path runs on its native thread. */
  get nativePathRunning(): boolean {
    return this.nativePath !== undefined;
  }

  /** What the native thread did by itself (undefined while it does not run); its counts are folded in first. */
  nativePathStats(): NativePathStats | undefined {
    this.nativePath?.fold();
    return this.nativePath?.stats();
  }

  /** the nodes the gateway takes VXLAN from (with pods) */
  get nodeCount(): number {
    return this.nodes.list.length;
  }

  get tunnelPort(): number {
    return this.tunnelSock?.port ?? 0;
  }

  get vxlanPort(): number {
    return this.vxlanSock?.port ?? 0;
  }

  async start(): Promise<void> {
    const c = this.config;
    const handover = this.opts.handover ?? new Handover('gateway');
    this.tunnelSock = await handover.open(`UDP ${c.tunnel.port}`, () =>
      UdpTransport.bind(c.tunnel.listen, c.tunnel.port, (m, a, p) => this.fromTunnel(m, a, p)),
    );
    this.vxlanSock = await handover.open(`UDP ${c.vxlan.port}`, () =>
      UdpTransport.bind(c.vxlan.listen, c.vxlan.port, (m, a, p) => this.fromVxlan(m, a, p), { onRun: this.fromAgentRun }),
    );
    if (!this.opts.noTun) {
      this.tun = await handover.open(`TUN device ${c.tun.name}`, () =>
        TunDevice.open(c.tun.name, (buf, off, len) => this.fromTun(buf, off, len), { offload: c.tun.offload }),
      );
      routeInto(
        this.tun.name,
        c.peers.flatMap((p) => p.subnets),
        { mtu: c.tun.mtu },
      );
      if (c.kubeProxyReturnPath) this.returnPath = programGatewayReturnPath(c.peers.flatMap((p) => p.subnets));
      if (c.kubeProxyReturnPath && c.ha) {
        this.passiveReturnPath = new AgentReturnPath({
          tunName: this.tun.name,
          remoteSubnets: c.peers.flatMap((p) => p.subnets),
          mark: AGENT_RETURN_PATH_MARK,
          table: AGENT_RETURN_PATH_TABLE,
          nftTable: 'strait-gateway-passive',
        });
      }
    }
    if (this.haStatus === 'active') this.startTunnel();
    this.followActive();
  }

  /** HA: route the replies of DNATed Service connections to the active gateway's node while passive; not when active. */
  private followActive(): void {
    const rp = this.passiveReturnPath;
    if (!rp) return;
    const to = this.haStatus === 'passive' ? this.activeAddress : undefined;
    if (to === this.passiveReturnPathTo) return;
    try {
      if (to === undefined) rp.close();
      else if (this.passiveReturnPathTo === undefined) rp.start(to);
      else rp.setGateway(to);
      this.passiveReturnPathTo = to;
    } catch (err) {
      this.opts.onWarning?.(`the return path of Service replies to the active gateway ${to ?? '(none)'}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private startTunnel(): void {
    if (this.tunnelStarted) return;
    this.tunnelStarted = true;
    this.tunnel.start();
    this.startNativePath();
  }

  /** The bulk path on its thread, when wanted and possible (the JS path carries everything otherwise). */
  private startNativePath(): void {
    if (!this.nativeWanted || this.nativePath !== undefined || this.nativePathReason !== '') return;
    const t = this.tunnelSock;
    const v = this.vxlanSock;
    const tun = this.tun;
    if (t === undefined || v === undefined || tun === undefined || t.nativeFd < 0 || v.nativeFd < 0) {
      this.nativePathReason = 'the UDP sockets are not the addon’s (STRAIT_UDP=dgram) or there is no TUN device';
      return;
    }
    try {
      const p = NativePath.start({
        tunnel: this.tunnel,
        vxlan: this.vxlan,
        udpFd: t.nativeFd,
        tunFd: tun.fd,
        vxlanFd: v.nativeFd,
        vxlanHeader: this.vxlanParts[0] as Buffer,
        agentPort: this.config.vxlan.agentPort,
        maxDatagram: this.config.tunnel.mtu - 28,
        features: this.tunnel.features,
        onUp: this.fromNativePath,
        threads: process.env['STRAIT_GATEWAY_THREADS'] === '2' ? 2 : 1,
        onDead: (reason) => {
          this.nativePath = undefined;
          this.nativePathReason = reason;
          this.opts.onWarning?.(reason);
        },
      });
      if (typeof p === 'string') {
        this.nativePathReason = p;
        return;
      }
      this.nativePath = p;
      p.setNodes(this.nodes.list);
      if (this.fenceAt !== 0) p.fence(this.fenceAt);
      // tests: STRAIT_GATEWAY_NATIVE_FAULT=exit@MS or stall@MS breaks the thread MS after it starts
      const fault = /^(exit|stall)@(\d+)$/.exec(process.env['STRAIT_GATEWAY_NATIVE_FAULT'] ?? '');
      if (fault) setTimeout(() => p.injectFault(fault[1] as 'exit' | 'stall'), Number(fault[2])).unref();
    } catch (err) {
      this.nativePathReason = err instanceof Error ? err.message : String(err);
      this.opts.onWarning?.(`the native data path did not start, the JS path carries everything: ${this.nativePathReason}`);
    }
  }

  /** What the native thread did not take: a tunnel datagram (kind 0) or a TUN packet (kind 1), as if read here. */
  private readonly fromNativePath = (kind: number, bytes: Buffer, addr: number, port: number): void => {
    if (kind === 0) this.fromTunnel(bytes, intToIpv4(addr), port);
    else if (kind === 1) this.fromTun(bytes, 0, bytes.length);
    else this.fromVxlan(bytes, intToIpv4(addr), port);
  };

  /**
   * HA: this gateway now holds the lease. Start the tunnels (the first handshake to every
   * remote gateway moves its peer address here: roaming on an authenticated initiation)
   * and announce to the cluster's node agents, now and every `ha.announceMs`.
   */
  becomeActive(epoch: number): void {
    this.haEpoch = epoch;
    this.activeAddress = undefined;
    if (this.haStatus === 'active' && this.tunnelStarted) return;
    this.haStatus = 'active';
    this.activeSince = Date.now();
    this.startTunnel();
    this.announce();
    // a lost datagram must not leave an agent behind: repeat soon, then periodically
    this.clearAnnouncements();
    this.announceTimers = [
      setTimeout(() => this.announce(), 20),
      setTimeout(() => this.announce(), 100),
      setInterval(() => this.announce(), this.config.ha?.announceMs ?? 1000),
    ];
    for (const t of this.announceTimers) t.unref();
    // the active node is where the replies go: nothing to route any more (after the tunnel started)
    this.followActive();
  }

  /**
   * HA fencing: the lease is ours until `until` (performance.now() ms). Past it (the process
   * was frozen, or the store has not confirmed the renewal), nothing is sent on the tunnel,
   * so a resumed former active gateway cannot pull the remote gateways back to itself.
   * The clock is read by the first send of each event-loop callback (a resumed process
   * checks before its first datagram) and then every FENCE_CHECK_EVERY sends, so a send
   * past the deadline can only happen within the same synchronous run, at most
   * FENCE_CHECK_EVERY - 1 datagrams after a clock read (docs/gateway-and-agent.md).
   */
  leaseHeld(until: number): void {
    this.fenceAt = until;
    this.fenced = until !== 0 && performance.now() > until;
    this.nativePath?.fence(until);
  }

  /** HA: the lease deadline has passed (read from the clock now) */
  get isFenced(): boolean {
    return this.fenceAt !== 0 && performance.now() > this.fenceAt;
  }

  private checkFence(): void {
    this.fenceSends = 0;
    if (!this.fenceFresh) {
      this.fenceFresh = true;
      queueMicrotask(this.fenceClear);
    }
    this.fenced = performance.now() > this.fenceAt;
  }

  /**
   * HA, once fenced: tell the peers so over the current sessions (the fence notice, next
   * header 5), the one kind of datagram let past the fence: it carries no traffic and moves
   * no peer to this gateway (docs/tunnel-protocol.md). Returns how many were sent.
   */
  noticeFenced(): number {
    this.fenceNotice = true;
    try {
      return this.tunnel.noticeFenced();
    } finally {
      this.fenceNotice = false;
    }
  }

  private sendTunnel(chunks: Buffer | Buffer[], port: number, address: string): void {
    if (this.fenceAt !== 0 && !this.fenceNotice) {
      if (!this.fenceFresh || ++this.fenceSends >= FENCE_CHECK_EVERY) this.checkFence();
      if (this.fenced) {
        this.vxlan.fencedDrops++;
        return;
      }
    }
    const sock = this.tunnelSock;
    if (sock === undefined) return;
    // the batched transport copies at once; node:dgram (fallback) sends later: copy for it
    if (sock.batched || !Array.isArray(chunks)) sock.send(chunks, port, address);
    else sock.send(Buffer.concat(chunks), port, address);
  }

  /**
   * HA: another gateway (underlay `address`) holds the lease with `epoch` (leaseTransitions);
   * this node's traffic goes to it over VXLAN. Without ha.members (Kubernetes mode) the
   * address is not known here: it is learnt from the holder's announcement of that epoch
   * (fromPeerGateway), and an address learnt for an older epoch is forgotten.
   */
  becomePassive(address: string | undefined, epoch?: number): void {
    if (this.haStatus === 'active' && this.tunnelStarted) return; // demotion: the daemon exits and restarts passive
    this.haStatus = 'passive';
    if (epoch !== undefined && epoch > this.haEpoch) {
      this.haEpoch = epoch;
      if (address === undefined) this.activeAddress = undefined;
    }
    if (address !== undefined) this.activeAddress = address;
    this.followActive();
  }

  private clearAnnouncements(): void {
    for (const t of this.announceTimers) clearTimeout(t);
    this.announceTimers = [];
  }

  private announce(): void {
    if (this.haStatus !== 'active' || !this.vxlanSock) return;
    const frame = encodeAnnounce(this.vni, this.haEpoch);
    for (const n of this.nodes.list) {
      this.vxlan.announcements++;
      this.vxlanSock.send(frame, this.config.vxlan.agentPort, n.address);
    }
  }

  /** UDP 4500: only the active gateway speaks the tunnel protocol. */
  private fromTunnel(msg: Buffer, address: string, port: number): void {
    if (this.haStatus === 'active') this.tunnel.receive(msg, address, port);
    else this.vxlan.passiveDrops++;
  }

  /** Re-read `pskFile` (or take `text`): a changed PSK re-handshakes with every peer. */
  reloadPsk(text?: string): boolean {
    const psk = text ?? (this.config.pskFile ? readPsk(this.config.pskFile) : this.config.psk);
    if (psk === undefined || psk === '') throw E.configInvalid('pskFile', this.config.pskFile ?? null, 'the PSK file is empty');
    return this.tunnel.setPsk(psk);
  }

  /**
   * The other clusters' gateway addresses from their Endpoint records (Kubernetes mode: the
   * broker's, as Submariner's gateways read them), beside each peer's configured standby: a
   * peer with no session is asked at all of them, so a gateway that starts while the other
   * cluster's active gateway is not the configured one (it failed over) does not wait for that
   * one to call.
   */
  followPeerEndpoints(endpoints: readonly { cluster: string; address: string }[]): void {
    for (const p of this.config.peers) {
      if (!this.tunnel.peer(p.clusterId)) continue;
      const fromRecords = endpoints.filter((e) => e.cluster === p.clusterId).map((e) => e.address);
      this.tunnel.setPeerAlternates(p.clusterId, [...p.standby, ...fromRecords]);
    }
  }

  setPeerEndpoint(clusterId: string, address: string, port?: number): void {
    this.tunnel.setPeerEndpoint(clusterId, address, port);
  }

  async stop(): Promise<void> {
    this.clearAnnouncements();
    this.nativePath?.stop();
    this.nativePath = undefined;
    this.tunnel.close();
    this.returnPath?.close();
    this.passiveReturnPath?.close();
    this.tun?.close();
    await this.tunnelSock?.close();
    // (gone, not only closed: an announcement scheduled after stop() finds no socket)
    const vxlan = this.vxlanSock;
    this.vxlanSock = undefined;
    await vxlan?.close();
  }

  /** A VXLAN frame from a node agent: route its inner IPv4 packet into a tunnel. */
  private fromVxlan(msg: Buffer, address: string, _port: number): void {
    const len = msg.length;
    // only the cluster's nodes (and HA members) speak VXLAN here: a pod is none of them
    const node = this.nodes.sender(address);
    if (node === undefined) {
      this.tunnel.counters.drops.unknown_sender++;
      return;
    }
    const etherType = len >= VXLAN_OVERHEAD ? msg.readUInt16BE(20) : 0;
    if (etherType === ETHERTYPE_STRAIT && len >= VXLAN_OVERHEAD && ((msg[0] as number) & 0x08) !== 0 && msg.readUIntBE(4, 3) === this.vni) {
      this.fromAgentExt(msg, address, _port, node);
      return;
    }
    if (
      len < VXLAN_OVERHEAD + 20 ||
      ((msg[0] as number) & 0x08) === 0 ||
      msg.readUIntBE(4, 3) !== this.vni ||
      (etherType !== ETHERTYPE_IPV4 && etherType !== ETHERTYPE_VNET)
    ) {
      if (etherType === ETHERTYPE_ANNOUNCE && this.fromPeerGateway(msg, address)) return;
      this.vxlan.malformed++;
      this.tunnel.counters.drops.malformed++;
      return;
    }
    this.vxlan.rxPackets++;
    this.vxlan.rxBytes += len - VXLAN_OVERHEAD;
    if (this.haStatus === 'passive') {
      // HA: decrypted traffic for this node's pods, from the active gateway
      if (address === this.activeAddress && etherType === ETHERTYPE_IPV4 && this.tun) this.tun.writePacket(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD);
      else this.tunnel.counters.drops.no_route++;
      return;
    }
    // the inner source must be a pod of the sending node
    const ipOff = etherType === ETHERTYPE_IPV4 ? VXLAN_OVERHEAD : VXLAN_OVERHEAD + VNET_HDR_LEN;
    const src = peekSource(msg, ipOff, len - ipOff);
    if (src >= 0 && !inPodCidrs(node, src)) {
      this.tunnel.counters.drops.spoofed_source++;
      return;
    }
    if (etherType === ETHERTYPE_IPV4) this.forward(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD);
    else this.forwardVnet(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD);
  }

  /**
   * HA: an announcement from the other gateway node of this cluster (the passive one follows it).
   * With ha.members, only from a member; without (Kubernetes mode), from the gateway that
   * announces the lease's current epoch or a newer one, as the node agents follow it.
   */
  private fromPeerGateway(msg: Buffer, address: string): boolean {
    const epoch = announceEpoch(msg);
    const members = this.config.ha?.members;
    if (epoch < 0 || members === undefined || (members.length > 0 && !members.some((m) => m.address === address))) return false;
    if (this.haStatus === 'passive' && epoch >= this.haEpoch) {
      this.haEpoch = epoch;
      this.activeAddress = address;
      this.followActive();
    }
    return true;
  }

  /** HA, passive: this node's pods' packets go to the active gateway over VXLAN, as an agent's would. */
  private toActive(buf: Buffer, off: number, len: number): void {
    const to = this.activeAddress;
    if (to === undefined || !this.vxlanSock) {
      this.tunnel.counters.drops.no_route++;
      return;
    }
    let etherType = ETHERTYPE_IPV4;
    if (this.config.tun.offload) {
      if (len > VNET_HDR_LEN && vnetHdrIsPlain(buf, off)) {
        off += VNET_HDR_LEN;
        len -= VNET_HDR_LEN;
      } else etherType = ETHERTYPE_VNET;
    }
    const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + len);
    writeHeaders(out, 0, this.vni, GATEWAY_MAC, AGENT_MAC, etherType);
    buf.copy(out, VXLAN_OVERHEAD, off, off + len);
    this.vxlan.txPackets++;
    this.vxlan.txBytes += len;
    this.vxlanSock.send(out, this.config.vxlan.port, to);
  }

  /**
   * A receive run of an agent's extension fragments (the agent's GSO send arrives whole):
   * when every datagram is a valid fragment of one message, with the same VXLAN and
   * Ethernet header, indexes in order, they go into the reassembly slot here without a
   * call per datagram. Anything else (false) takes the per-datagram path (fromVxlan), which
   * counts and drops what is wrong; the outcome is the same either way.
   */
  private readonly fromAgentRun = (buf: Buffer, len: number, seg: number, address: string, _port: number): boolean => {
    const h = VXLAN_OVERHEAD;
    const node = this.nodes.sender(address);
    if (
      node === undefined ||
      this.haStatus === 'passive' ||
      seg < h + EXT_HEADER ||
      seg >= len ||
      buf.readUInt16BE(20) !== ETHERTYPE_STRAIT ||
      ((buf[0] as number) & 0x08) === 0 ||
      buf.readUIntBE(4, 3) !== this.vni ||
      buf[h] !== EXT_FRAGMENT
    )
      return false;
    const first = buf[h + 1] as number;
    const id = buf.readUInt32BE(h + 4);
    const n = Math.ceil(len / seg);
    for (let i = 0, o = 0; i < n; i++, o += seg) {
      const l = o + seg < len ? seg : len - o;
      if (
        l < h + EXT_HEADER ||
        extRule(buf, o + h, l - h) !== '' ||
        buf[o + h] !== EXT_FRAGMENT ||
        buf[o + h + 1] !== first + i ||
        buf.readUInt32BE(o + h + 4) !== id ||
        (i > 0 && (buf.compare(buf, 0, h + 1, o, o + h + 1) !== 0 || buf[o + h + 2] !== buf[h + 2] || buf.readUInt16BE(o + h + 8) !== buf.readUInt16BE(h + 8)))
      )
        return false;
    }
    if (address !== this.lastAgent) {
      this.lastAgent = address;
      this.lastAgentInt = ipv4ToInt(address) ?? 0;
    }
    const r = this.vxlanReassembly;
    const count = buf[h + 2] as number;
    const size = buf.readUInt16BE(h + 8);
    const now = this.clock.monotonic();
    this.vxlan.fragmentRuns++;
    for (let i = 0, o = 0; i < n; i++, o += seg) {
      const l = o + seg < len ? seg : len - o;
      this.vxlan.fragments++;
      const slot = r.add(this.lastAgentInt, id, first + i, count, size, buf, o + h + EXT_HEADER, l - h - EXT_HEADER, now);
      if (slot < 0) continue;
      this.reassembledFromAgent(slot, node);
    }
    return true;
  };

  private reassembledFromAgent(slot: number, node: NodeEntry): void {
    const r = this.vxlanReassembly;
    const total = r.length(slot);
    const buf = r.buffer(slot);
    this.vxlan.reassembled++;
    this.vxlan.rxPackets++;
    this.vxlan.rxBytes += total;
    // a super-packet, too, must come from a pod of the node that sent its fragments
    const src = total > VNET_HDR_LEN ? peekSource(buf, VNET_HDR_LEN, total - VNET_HDR_LEN) : -1;
    if (src >= 0 && !inPodCidrs(node, src)) this.tunnel.counters.drops.spoofed_source++;
    // sealed (copied) before this returns: the slot can be reused at once
    else this.forwardVnet(buf, 0, total);
    r.release(slot);
  }

  /** A strait extension frame from an agent: a hello (answered) or a super-packet fragment. */
  private fromAgentExt(msg: Buffer, address: string, port: number, node: NodeEntry): void {
    const len = msg.length;
    if (extRule(msg, VXLAN_OVERHEAD, len - VXLAN_OVERHEAD) !== '') {
      this.vxlan.malformed++;
      this.tunnel.counters.drops.malformed++;
      return;
    }
    const kind = msg[VXLAN_OVERHEAD] as number;
    if (kind === EXT_HELLO) {
      this.vxlan.hellos++;
      this.helloAt.set(address, performance.now());
      const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + EXT_HEADER);
      writeHeaders(out, 0, this.vni, AGENT_MAC, GATEWAY_MAC, ETHERTYPE_STRAIT);
      writeExtHeader(out, VXLAN_OVERHEAD, EXT_HELLO_ACK, 0, 0, EXT_FEATURE_FRAGMENTS, msg.readUInt32BE(VXLAN_OVERHEAD + 4), 0);
      this.vxlanSock?.send(out, port, address);
      return;
    }
    if (kind !== EXT_FRAGMENT) return; // a hello-ack is for agents
    if (this.haStatus === 'passive') {
      // HA: only the active gateway sends into the tunnels; the agent follows the next announcement
      this.tunnel.counters.drops.no_route++;
      return;
    }
    this.vxlan.fragments++;
    if (address !== this.lastAgent) {
      this.lastAgent = address;
      this.lastAgentInt = ipv4ToInt(address) ?? 0;
    }
    const h = VXLAN_OVERHEAD;
    const r = this.vxlanReassembly;
    const slot = r.add(
      this.lastAgentInt,
      msg.readUInt32BE(h + 4),
      msg[h + 1] as number,
      msg[h + 2] as number,
      msg.readUInt16BE(h + 8),
      msg,
      h + EXT_HEADER,
      len - h - EXT_HEADER,
      this.clock.monotonic(),
    );
    if (slot < 0) return;
    this.reassembledFromAgent(slot, node);
  }

  /** A packet the gateway node routed into the TUN device. */
  private fromTun(buf: Buffer, off: number, len: number): void {
    if (this.haStatus === 'passive') this.toActive(buf, off, len);
    else if (!this.config.tun.offload) this.forward(buf, off, len);
    else if (len > VNET_HDR_LEN && vnetHdrIsPlain(buf, off)) this.forward(buf, off + VNET_HDR_LEN, len - VNET_HDR_LEN);
    else this.forwardVnet(buf, off, len);
  }

  private forward(buf: Buffer, off: number, len: number): void {
    const dst = peekDestination(buf, off, len);
    const peer = dst < 0 ? undefined : this.tunnel.route(dst);
    if (peer === undefined) {
      if (dst < 0) this.tunnel.counters.drops.malformed++;
      else this.tunnel.counters.drops.no_route++;
      return;
    }
    this.tunnel.sendPacket(peer, buf.subarray(off, off + len), NEXT_IPV4);
  }

  /** A virtio_net_hdr + (super-)packet: only to peers that accept them. */
  private forwardVnet(buf: Buffer, off: number, len: number): void {
    const dst = len > VNET_HDR_LEN ? peekDestination(buf, off + VNET_HDR_LEN, len - VNET_HDR_LEN) : -1;
    const peer = dst < 0 ? undefined : this.tunnel.route(dst);
    if (peer === undefined) {
      if (dst < 0) this.tunnel.counters.drops.malformed++;
      else this.tunnel.counters.drops.no_route++;
      return;
    }
    if ((peer.features & FEATURE_VNET) !== 0 && this.tunnel.fitsOneMessage(peer, len)) {
      this.tunnel.sendPacket(peer, buf.subarray(off, off + len), NEXT_IPV4_VNET);
      return;
    }
    // the peer takes plain packets only (an older gateway, or offload off there), or the
    // super-packet would need more fragments than a receiver takes (a small tunnel MTU):
    // cut it into segments here, as the NIC would have
    this.segScratch ??= Buffer.allocUnsafe(65536);
    this.segPeer = peer;
    try {
      segmentVnet(buf, off, len, this.segScratch, this);
    } catch {
      this.tunnel.counters.drops.malformed++;
    }
    this.segPeer = undefined;
  }

  /** SegmentSink: one plain IPv4 packet of a super-packet cut by segmentVnet(). */
  segment(buf: Buffer, off: number, len: number): void {
    const peer = this.segPeer;
    if (peer !== undefined) this.tunnel.sendPacket(peer, buf.subarray(off, off + len), NEXT_IPV4);
  }

  /** A decrypted packet from a remote gateway: into this cluster's network. */
  private deliver(packet: Buffer, peer: Peer, next: number): void {
    const len = packet.length;
    const ipOff = next === NEXT_IPV4_VNET ? VNET_HDR_LEN : 0;
    const src = peekSource(packet, ipOff, len - ipOff);
    // anti-spoofing (WireGuard's allowed IPs): the source must be one of the peer's subnets
    if (src < 0 || !inAny(peer.subnets, src)) {
      this.tunnel.counters.drops.auth++;
      return;
    }
    if (this.opts.onDeliver) this.opts.onDeliver(packet, peer, next);
    if (ipOff !== 0) {
      // super-packets go to the node's routing (the kernel segments them on the way out)
      if (this.tun) this.tun.write(packet, 0, len);
      return;
    }
    const dst = peekDestination(packet, 0, len);
    const nodes = this.nodes.list;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i] as NodeEntry;
      if (inPodCidrs(n, dst)) {
        this.vxlan.txPackets++;
        this.vxlan.txBytes += len;
        const sock = this.vxlanSock;
        if (sock?.batched === true) {
          // copied at once by the batched transport: constant header + the decrypted packet
          this.vxlanParts[1] = packet;
          sock.send(this.vxlanParts, this.config.vxlan.agentPort, n.address);
          return;
        }
        const out = Buffer.allocUnsafe(VXLAN_OVERHEAD + len);
        writeHeaders(out, 0, this.vni, AGENT_MAC, GATEWAY_MAC, ETHERTYPE_IPV4);
        packet.copy(out, VXLAN_OVERHEAD);
        this.vxlanSock?.send(out, this.config.vxlan.agentPort, n.address);
        return;
      }
    }
    if (this.tun) this.tun.writePacket(packet, 0, len);
  }

  // --- records ------------------------------------------------------------------------

  /**
   * The Endpoint record: private IP := tunnel.privateIP (STRAIT_NODE_IP in deploy/), else
   * the tunnel's advertised address; public IP := tunnel.publicIP, else the private IP (as
   * Submariner's gateway does when no public-IP discovery is configured). Neither is ever
   * 0.0.0.0 (parseGatewayConfig refuses it as a configured value).
   */
  endpointRecord(): EndpointRecord {
    const c = this.config;
    const ip = c.tunnel.privateIP ?? advertisedAddress(c.tunnel.listen);
    return {
      clusterId: c.clusterId,
      hostname: c.name || hostname(),
      endpointIP: ip,
      publicIP: c.tunnel.publicIP ?? ip,
      cableDriver: CABLE_DRIVER,
      subnets: [...c.localSubnets],
      type: 'local',
    };
  }

  connectionRecords(): ConnectionRecord[] {
    if (this.haStatus === 'passive') return [];
    return this.tunnel.records().map((r: PeerRecord) => ({
      gateway: this.config.name,
      cluster: r.cluster,
      remoteIP: r.remoteIP,
      // a remote cluster's standby gateway that took over is not NAT
      nat: r.nat && this.standbyEndpoints.get(r.cluster)?.has(`${r.remoteIP}:${r.remotePort}`) !== true ? 'yes' : 'no',
      cableDriver: CABLE_DRIVER,
      subnets: r.subnets,
      status: r.status,
      reason: r.reason,
      statusMessage: r.statusMessage,
      lastTransitionTime: r.lastTransitionTime,
      rttAvg: r.rttAvgMs === null ? '' : formatRtt(r.rttAvgMs),
      rttAvgMs: r.rttAvgMs,
      latency: r.latency,
      loss: r.loss,
      txBytes: r.txBytes,
      txPackets: r.txPackets,
      rxBytes: r.rxBytes,
      rxPackets: r.rxPackets,
      handshakes: r.handshakes,
      rekeys: r.rekeys,
    }));
  }

  gatewayRecord(): GatewayRecord {
    if (this.haStatus === 'passive') return { node: this.config.name, haStatus: 'passive', summary: 'There are no connections' };
    // HA: the lease was not confirmed in time (frozen, cut off from the store): fenced, not active
    if (this.isFenced) {
      return {
        node: this.config.name,
        haStatus: 'passive',
        summary: `Lease not confirmed for ${Math.round(performance.now() - this.fenceAt)} ms past its deadline: fenced, sending nothing into the tunnel`,
      };
    }
    const conns = this.tunnel.records();
    const up = conns.filter((r) => r.status === 'connected').length;
    const summary =
      up === conns.length ? `All connections (${conns.length}) are established` : `${conns.length - up} connection(s) of ${conns.length} are not established`;
    const legs = this.nodeLegs();
    return { node: this.config.name, haStatus: this.haStatus, summary, ...(legs.length > 0 ? { nodeLegs: legs } : {}) };
  }

  /** The node agents' VXLAN legs, from their hellos (the nodes of the table that ever sent one). */
  nodeLegs(): NodeLeg[] {
    const now = performance.now();
    const out: NodeLeg[] = [];
    for (const n of this.nodes.list) {
      const at = this.helloAt.get(n.address);
      if (at === undefined) continue;
      const ok = now - at < NODE_LEG_ERROR_AFTER_MS;
      out.push({
        address: n.address,
        status: ok ? 'ok' : 'broken',
        message: ok ? '' : `no VXLAN hello from the node agent at ${n.address} for more than ${NODE_LEG_ERROR_AFTER_MS / 1000} s`,
      });
    }
    return out;
  }
}

function inAny(cidrs: readonly Cidr[], ip: number): boolean {
  for (let i = 0; i < cidrs.length; i++) if (cidrContains(cidrs[i] as Cidr, ip)) return true;
  return false;
}

/** Submariner prints RTT like Go's time.Duration: "1.234567ms". */
export function formatRtt(ms: number): string {
  if (ms < 1) return `${Math.round(ms * 1000)}µs`;
  return `${ms.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}ms`;
}

function readPsk(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw E.fileUnreadable(path, err instanceof Error ? err.message : String(err));
  }
}

/** Validate `config` and start a gateway data plane. */
export async function startGateway(config: unknown, opts: GatewayOptions = {}): Promise<Gateway> {
  const g = new Gateway(parseGatewayConfig(config), opts);
  await g.start();
  return g;
}

/**
 * The address the Endpoint record publishes for a tunnel listening on `listen`: that
 * address, or for an unspecified one (0.0.0.0, every address) the host's first
 * non-loopback IPv4 address; 0.0.0.0 is never published (no peer can reach it).
 */
export function advertisedAddress(listen: string, interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): string {
  if (listen !== '0.0.0.0') return listen;
  const names = Object.keys(interfaces).sort();
  for (const n of names) {
    for (const a of interfaces[n] ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
