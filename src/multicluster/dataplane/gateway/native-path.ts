// The gateway's bulk data path on a native thread (native/src/gwpath.c): tunnel UDP receive
// -> replay check -> AEAD open -> TUN write or VXLAN to the node agent, and TUN read or the
// agents' VXLAN frames (reassembled) -> seal -> UDP GSO, on sessions whose keys, counters and windows live in the addon
// (tunnel/native-session.ts). Every decision stays in TypeScript: this class tells the
// thread which session it sends on for each peer (with the packet limit and lifetime the
// endpoint enforces), which sessions it may open (confirmed, connected, from the peer's
// current address), the node table and the HA fence; the thread hands everything else up
// (handshakes, probes, notices, unknown or expiring sessions, roaming, unroutable TUN
// packets) to the endpoint unchanged. Its counters are folded into the endpoint's and the
// gateway's at each tick and each records() (an authenticated packet moves the peer's
// lastReceivedAt, the dead-peer timer's input). STRAIT_GATEWAY_NATIVE=0 turns it off.
import { ipv4ToInt } from '../../../base/config/index.js';
import { native, type NativeAddon } from '../../../platform/native/index.js';
import type { Peer, TunnelEndpoint } from '../tunnel/index.js';
import type { NodeEntry } from './node-table.js';

/** Slots of the thread's counters (gwpath.c's enums): global ones, then PEER_STRIDE per peer slot. */
const C = {
  replay: 0,
  auth: 1,
  malformed: 2,
  fragment: 3,
  reassembly: 4,
  fragmentsSent: 5,
  fragmentsReceived: 6,
  reassembled: 7,
  fenced: 8,
  vxlanTxPackets: 9,
  vxlanTxBytes: 10,
  upTunnel: 11,
  upTun: 12,
  upDropped: 13,
  opened: 14,
  sealed: 15,
  sendErrors: 16,
  tunWriteErrors: 17,
  udpReads: 18,
  tunReads: 19,
  noRoute: 20,
  spoofed: 21,
  vxlanRxPackets: 22,
  vxlanRxBytes: 23,
  vxlanFragments: 24,
  vxlanReassembled: 25,
  vxlanReads: 26,
  upVxlan: 27,
  beats: 28,
  beatsTx: 29,
  exited: 30,
} as const;
const GLOBAL = 31;
/** a thread whose loop has not come round for this long is taken for dead (it comes round every 100 ms) */
export const NATIVE_PATH_STALL_MS = 2000;
const PEER_STRIDE = 5;
const P_RX_PACKETS = 0;
const P_RX_BYTES = 1;
const P_TX_PACKETS = 2;
const P_TX_BYTES = 3;
const P_AUTHENTICATED = 4;
/** peers and node-table rows the thread takes (gwpath.c DP_PEERS, DP_NODES) */
export const NATIVE_PATH_PEERS = 16;
export const NATIVE_PATH_NODE_ROWS = 512;
const COUNTERS = GLOBAL + NATIVE_PATH_PEERS * PEER_STRIDE;

/** What the thread did by itself (the rest is in the endpoint's and the gateway's counters). */
export interface NativePathStats {
  /** messages opened and delivered / packets sealed and sent on the thread */
  opened: number;
  sealed: number;
  /** tunnel datagrams, TUN packets and agents' VXLAN frames handed up to TypeScript, and hand-ups lost to a full queue */
  upTunnel: number;
  upTun: number;
  upVxlan: number;
  upDropped: number;
  sendErrors: number;
  tunWriteErrors: number;
  udpReads: number;
  tunReads: number;
  vxlanReads: number;
}

/** The gateway's counters the thread adds to (VxlanCounters' fields). */
export interface NativePathGatewayCounters {
  rxPackets: number;
  rxBytes: number;
  txPackets: number;
  txBytes: number;
  fencedDrops: number;
  fragments: number;
  reassembled: number;
}

export interface NativePathOptions {
  tunnel: TunnelEndpoint;
  vxlan: NativePathGatewayCounters;
  udpFd: number;
  tunFd: number;
  vxlanFd: number;
  /** VXLAN + inner Ethernet header (22 bytes) of frames to the node agents */
  vxlanHeader: Buffer;
  agentPort: number;
  maxDatagram: number;
  /** FEATURE_* bits this gateway accepts */
  features: number;
  /** what the thread did not take: a tunnel datagram (kind 0), a TUN packet (1), an agent's VXLAN frame (2) */
  onUp(kind: number, bytes: Buffer, addr: number, port: number): void;
  /** 2: receive (the tunnel socket) and send (TUN, VXLAN) on two threads; default 1 */
  threads?: 1 | 2;
  /**
   * The thread ended or stalled without being told to (its heartbeat stopped): the path is
   * stopped (the event-loop readers resume and the JS path carries everything) and this says why.
   */
  onDead?(reason: string): void;
}

export class NativePath {
  private readonly last = new Float64Array(COUNTERS);
  private readonly slots = new Map<Peer, number>();
  /** what the thread was last told of each peer (syncPeer) */
  private readonly synced = new Map<Peer, string>();
  private readonly subnets: Float64Array[];
  private running = true;
  /** each thread's last beat count and when (monotonic ms) it last moved */
  private readonly beats: { slot: number; count: number; at: number }[];
  private lastCheck = 0;

  private constructor(
    private readonly addon: NativeAddon,
    private readonly id: number,
    private readonly opts: NativePathOptions,
    private readonly counters: Float64Array,
  ) {
    const peers = opts.tunnel.peers;
    this.subnets = peers.map((p) => {
      const f = new Float64Array(p.subnets.length * 2);
      p.subnets.forEach((c, i) => {
        f[2 * i] = c.network;
        f[2 * i + 1] = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
      });
      return f;
    });
    peers.forEach((p, i) => this.slots.set(p, i));
    const now = opts.tunnel.monotonic();
    this.beats = (opts.threads === 2 ? [C.beats, C.beatsTx] : [C.beats]).map((slot) => ({ slot, count: -1, at: now }));
  }

  /** Start the thread, or say why not. */
  static start(opts: NativePathOptions): NativePath | string {
    let addon: NativeAddon;
    try {
      addon = native();
    } catch (err) {
      return `no native addon: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (typeof addon.tunnelPathStart !== 'function') return 'the native addon has no tunnelPathStart (an older build)';
    if (opts.tunnel.peers.length > NATIVE_PATH_PEERS) return `${opts.tunnel.peers.length} peers: the native path takes at most ${NATIVE_PATH_PEERS}`;
    if (opts.tunnel.peers.some((p) => p.subnets.length > 32)) return 'a peer with more than 32 subnets';
    const L = opts.tunnel.limitsInUse;
    const counters = new Float64Array(COUNTERS);
    const id = addon.tunnelPathStart(
      opts.udpFd,
      opts.tunFd,
      opts.vxlanFd,
      opts.vxlanHeader,
      opts.agentPort,
      opts.maxDatagram,
      opts.features,
      L.rejectAfterPackets,
      L.reassemblyTimeoutMs,
      counters,
      opts.onUp,
      opts.threads ?? 1,
    );
    const p = new NativePath(addon, id, opts, counters);
    for (const peer of opts.tunnel.peers) p.syncPeer(peer);
    return p;
  }

  /** The thread follows the endpoint's state of `peer` (TunnelOptions.onPeerChange). */
  syncPeer(peer: Peer): void {
    const slot = this.slots.get(peer);
    if (!this.running || slot === undefined) return;
    const connected = peer.connectedSince >= 0;
    // called every tick for every peer: the thread is told only what changed (its session
    // deadlines were fixed when each session was first given: they need no refresh)
    const cur0 = peer.current;
    let sig = `${connected ? 1 : 0} ${peer.address} ${peer.port} ${peer.features} ${cur0?.crypto?.id ?? -1} ${cur0?.remoteIndex ?? 0}`;
    for (const s of [peer.previous, peer.current, peer.next]) if (s?.crypto !== undefined) sig += ` ${s.crypto.id}/${s.localIndex}/${s.confirmed ? 1 : 0}`;
    if (this.synced.get(peer) === sig) return;
    const t = this.opts.tunnel;
    const L = t.limitsInUse;
    const now = t.monotonic();
    for (const s of [peer.previous, peer.current, peer.next]) {
      if (s?.crypto === undefined) continue;
      this.addon.tunnelPathSession(this.id, s.crypto.id, slot, s.localIndex, s.confirmed && connected, L.rejectAfterMs - (now - s.createdAt));
    }
    const cur = peer.current?.crypto !== undefined ? peer.current : undefined;
    this.addon.tunnelPathPeer(
      this.id,
      slot,
      ipv4ToInt(peer.address) ?? 0,
      peer.port,
      peer.features,
      this.subnets[slot] as Float64Array,
      cur?.crypto?.id ?? -1,
      cur?.remoteIndex ?? 0,
      L.rekeyAfterPackets,
      cur !== undefined ? L.rejectAfterMs - (now - cur.createdAt) : 0,
    );
    // remembered once the thread took it all (a call that threw is tried again at the next tick)
    this.synced.set(peer, sig);
  }

  /** The node table (delivery of plain packets over VXLAN), in the gateway's order. */
  setNodes(nodes: readonly NodeEntry[]): void {
    if (!this.running) return;
    const rows: number[] = [];
    for (const n of nodes) {
      const addr = ipv4ToInt(n.address);
      if (!n.pods || addr === undefined) continue;
      for (let i = 0; i < n.nets.length; i++) rows.push(n.nets[i] as number, n.masks[i] as number, addr);
    }
    this.addon.tunnelPathNodes(this.id, new Float64Array(rows.slice(0, NATIVE_PATH_NODE_ROWS * 3)));
  }

  /** HA: nothing is sent after performance.now() `until` (0: no fence). */
  fence(until: number): void {
    if (this.running) this.addon.tunnelPathFence(this.id, until === 0 || until === Number.POSITIVE_INFINITY ? -1 : Math.max(0, until - performance.now()));
  }

  /** Fold what the thread counted since the last fold into the endpoint's and the gateway's counters. */
  fold(): void {
    const c = this.counters;
    const l = this.last;
    const d = (i: number): number => {
      const v = c[i] as number;
      const delta = v - (l[i] as number);
      l[i] = v;
      return delta;
    };
    const t = this.opts.tunnel;
    const k = t.counters;
    k.drops.replay += d(C.replay);
    k.drops.auth += d(C.auth);
    k.drops.malformed += d(C.malformed);
    k.drops.fragment += d(C.fragment);
    k.drops.reassembly += d(C.reassembly);
    k.drops.no_route += d(C.noRoute);
    k.drops.spoofed_source += d(C.spoofed);
    k.fragmentsSent += d(C.fragmentsSent);
    k.fragmentsReceived += d(C.fragmentsReceived);
    k.reassembled += d(C.reassembled);
    const g = this.opts.vxlan;
    g.fencedDrops += d(C.fenced);
    g.txPackets += d(C.vxlanTxPackets);
    g.txBytes += d(C.vxlanTxBytes);
    g.rxPackets += d(C.vxlanRxPackets);
    g.rxBytes += d(C.vxlanRxBytes);
    g.fragments += d(C.vxlanFragments);
    g.reassembled += d(C.vxlanReassembled);
    const now = t.monotonic();
    for (const [peer, slot] of this.slots) {
      const b = GLOBAL + slot * PEER_STRIDE;
      peer.rx.packets += d(b + P_RX_PACKETS);
      peer.rx.bytes += d(b + P_RX_BYTES);
      peer.tx.packets += d(b + P_TX_PACKETS);
      peer.tx.bytes += d(b + P_TX_BYTES);
      // an authenticated message opened on the thread: the peer is alive (dead-peer timer)
      if (d(b + P_AUTHENTICATED) > 0) peer.lastReceivedAt = now;
    }
    if (this.running) this.checkAlive(now);
  }

  /** Whether the thread still runs, from what it does (its heartbeat), not from this object: a dead one is stopped and reported. */
  private checkAlive(now: number): void {
    const c = this.counters;
    const errno = c[C.exited] as number;
    let why = errno !== 0 ? `the native thread ended by itself (errno ${errno})` : '';
    // this process itself stood still (SIGSTOP, a long pause): every thread stood with it, so
    // its silence says nothing yet; it is judged from now on
    const paused = this.lastCheck !== 0 && now - this.lastCheck > NATIVE_PATH_STALL_MS / 2;
    this.lastCheck = now;
    for (const b of this.beats) {
      if (paused) b.at = now;
      const count = c[b.slot] as number;
      if (count !== b.count) {
        b.count = count;
        b.at = now;
      } else if (why === '' && now - b.at >= NATIVE_PATH_STALL_MS) why = `the native thread has not come round for ${Math.round(now - b.at)} ms`;
    }
    if (why === '') return;
    this.stop();
    this.opts.onDead?.(`${why}: stopped, the JS path carries everything`);
  }

  /** Fault injection for tests (STRAIT_GATEWAY_NATIVE_FAULT): 'exit' ends the thread as a poll error would, 'stall' stops its loop. */
  injectFault(kind: 'exit' | 'stall'): void {
    if (this.running) this.addon.tunnelPathFault(this.id, kind === 'exit' ? 1 : 2);
  }

  stats(): NativePathStats {
    const c = this.counters;
    return {
      opened: c[C.opened] as number,
      sealed: c[C.sealed] as number,
      upTunnel: c[C.upTunnel] as number,
      upTun: c[C.upTun] as number,
      upVxlan: c[C.upVxlan] as number,
      upDropped: c[C.upDropped] as number,
      sendErrors: c[C.sendErrors] as number,
      tunWriteErrors: c[C.tunWriteErrors] as number,
      udpReads: c[C.udpReads] as number,
      tunReads: c[C.tunReads] as number,
      vxlanReads: c[C.vxlanReads] as number,
    };
  }

  /** Stop the thread (the event-loop readers resume) and fold its last counts. */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.addon.tunnelPathStop(this.id);
    this.fold();
  }
}
