// A tunnel endpoint: every peer gateway's handshake state machine, sessions, timers,
// keepalives/RTT and counters. No sockets: datagrams come in through receive() and
// leave through the `send` function of the options, so the whole protocol runs in a
// unit test with a ManualClock. docs/tunnel-protocol.md is the specification.
import { randomBytes, randomInt } from 'node:crypto';
import type { Clock } from '../../../base/clock/index.js';
import { E } from '../../../base/errors/index.js';
import { parseCidr, cidrContains, type Cidr } from '../../../base/config/index.js';
import {
  FEATURE_VNET,
  FEATURE_FRAG,
  FRAG_HEADER,
  TYPE_FRAGMENT,
  MAX_FRAGMENTED_BODY,
  MAX_FRAGMENTS,
  fragmentPlan,
  fragmentRule,
  writeFragmentHeader,
  cookieReply,
  handshakeInit,
  handshakeResponse,
  writeDataHeader,
  PROTOCOL_VERSION,
  DATA_HEADER,
  TAG_LEN,
  TYPE_COOKIE,
  TYPE_DATA,
  TYPE_INIT,
  TYPE_RESPONSE,
  NEXT_IPV4,
  NEXT_IPV4_VNET,
  NEXT_PROBE,
  NEXT_PROBE_REPLY,
  TUNNEL_PORT,
  FEATURE_HEALTH,
  FEATURE_FENCE_NOTICE,
  NEXT_FENCE_NOTICE,
  NEXT_PSK_NOTICE,
  NEXT_MAX,
} from '../../wire/tunnel/index.js';
import { CookieChecker, cookieKey, mac, mac1Key, macEqual, openCookie } from './cookie.js';
import { consumeInitiation, consumeResponse, createInitiation, createResponse, type InitiatorState } from './handshake.js';
import { pskFromText } from './noise.js';
import { Session, type SessionCryptoFactory } from './session.js';
import { Reassembler } from './reassembly.js';
import { HEALTH_DEFAULTS, lossText, PeerHealth, type HealthLimits, type HealthReason, type LatencyStats } from './health.js';

export interface TunnelLimits {
  rekeyAfterMs: number;
  rejectAfterMs: number;
  rekeyAfterPackets: number;
  rejectAfterPackets: number;
  rekeyTimeoutMs: number;
  handshakeAttempts: number;
  keepaliveMs: number;
  deadAfterMs: number;
  /** initiations per second above which mac2 (cookie) is required */
  handshakeRateLimit: number;
  /** packets held while a handshake is under way */
  queueLimit: number;
  /** fragmented messages reassembled at once per peer (memory: slots x 64 KiB) */
  reassemblySlots: number;
  /** an incomplete fragmented message is given up after this long */
  reassemblyTimeoutMs: number;
}

export const DEFAULT_LIMITS: Readonly<TunnelLimits> = Object.freeze({
  rekeyAfterMs: 120_000,
  rejectAfterMs: 180_000,
  rekeyAfterPackets: 2 ** 32,
  rejectAfterPackets: 2 ** 48,
  rekeyTimeoutMs: 5_000,
  handshakeAttempts: 3,
  keepaliveMs: HEALTH_DEFAULTS.probeMs,
  deadAfterMs: 5_000,
  handshakeRateLimit: 100,
  queueLimit: 64,
  reassemblySlots: 8,
  reassemblyTimeoutMs: 1_000,
});

export interface PeerConfig {
  clusterId: string;
  /** IPv4 address of the remote gateway's public endpoint */
  address: string;
  port?: number;
  /** the remote cluster's CIDRs (pod and service) */
  subnets: string[];
  /**
   * the remote cluster's other gateway addresses (its standby, HA): a first handshake (no
   * session) is sent to these too, and whichever is active answers
   */
  alternates?: string[];
}

/** fragment: duplicate or inconsistent fragments; reassembly: fragmented messages given up (lost fragment) */
/** unknown_sender, spoofed_source: VXLAN frames at the gateway (not a node of the cluster; inner source not in the sending node's pod CIDRs) */
export type DropReason = 'replay' | 'auth' | 'no_route' | 'malformed' | 'stale' | 'fragment' | 'reassembly' | 'unknown_sender' | 'spoofed_source';

/** Largest UDP payload on a 1500-byte path (IPv4 20 + UDP 8): datagrams above it would be IP-fragmented. */
export const DEFAULT_MAX_DATAGRAM = 1472;
export type PeerStatus = 'connecting' | 'connected' | 'error';

export interface TunnelEvent {
  level: 'info' | 'warn' | 'error';
  msg: string;
  peer?: string;
  code?: string;
}

export interface TunnelOptions {
  clusterId: string;
  /** the PSK text from the broker-info file */
  psk: string;
  clock: Clock;
  peers: PeerConfig[];
  /**
   * put a datagram on the wire; the buffers must not be reused by the caller afterwards,
   * unless `sendCopies` says that send() copies them before it returns
   */
  send(chunks: Buffer | Buffer[], port: number, address: string): void;
  /** send() copies the chunks at once: the endpoint then reuses its header buffers and part arrays (no per-packet allocation) */
  sendCopies?: boolean;
  /** a decrypted IPv4 packet from `peer`; `next` is NEXT_IPV4 or NEXT_IPV4_VNET (virtio_net_hdr first) */
  deliver(packet: Buffer, peer: Peer, next: number): void;
  /** FEATURE_* bits this endpoint accepts (advertised in the handshake) */
  features?: number;
  onEvent?(ev: TunnelEvent): void;
  limits?: Partial<TunnelLimits>;
  /** highest protocol version this endpoint speaks (tests use it to check downgrade handling) */
  maxVersion?: number;
  /** health probes: `error` after errorAfterMs without an answered probe, loss and latency over `window` probes (the probe period is limits.keepaliveMs) */
  health?: Partial<Omit<HealthLimits, 'probeMs'>>;
  /**
   * Largest datagram to send (path MTU - 28). A sealed message above it goes out in
   * fragments to peers advertising FEATURE_FRAG; default DEFAULT_MAX_DATAGRAM.
   */
  maxDatagram?: number;
  /**
   * Sessions' AEAD, counters and windows outside node:crypto (the gateway's native data
   * path: native-session.ts); every decision stays here. Undefined: node:crypto.
   */
  sessionCrypto?: SessionCryptoFactory;
  /**
   * A peer's sessions, address, features or connection changed (the native data path
   * follows: which session it sends on, which it may open, from which address). Called
   * at once after each change and for every peer at each tick.
   */
  onPeerChange?(peer: Peer): void;
  /** called before each tick and each records(): the native data path folds its counters in */
  onSync?(): void;
}

export interface DirectionCounters {
  bytes: number;
  packets: number;
}

export class TunnelCounters {
  handshakesInitiated = 0;
  handshakesCompleted = 0;
  handshakesResponded = 0;
  handshakeTimeouts = 0;
  cookiesSent = 0;
  rekeys = 0;
  /** fragments sent / received, fragmented messages reassembled */
  fragmentsSent = 0;
  fragmentsReceived = 0;
  reassembled = 0;
  readonly drops: Record<DropReason, number> = {
    replay: 0,
    auth: 0,
    no_route: 0,
    malformed: 0,
    stale: 0,
    fragment: 0,
    reassembly: 0,
    unknown_sender: 0,
    spoofed_source: 0,
  };
}

/** The remote gateway of one cluster, and everything we know about it. */
export class Peer {
  readonly clusterId: string;
  readonly subnets: readonly Cidr[];
  configuredAddress: string;
  configuredPort: number;
  address: string;
  port: number;
  /** the remote cluster's other gateway addresses (configured standby; its Endpoint records): asked too while there is no session */
  alternates: readonly string[];
  status: PeerStatus = 'connecting';
  /** why the status is not `connected` ('' when it is, or while a first handshake is young) */
  reason: HealthReason | '' = '';
  /** wall-clock ms of the last change of status or reason (-1: none yet) */
  transitionAt = -1;
  lastError: string | undefined;
  /** latency and loss from answered probes, PSK-mismatch evidence (health.ts) */
  readonly health: PeerHealth;
  /** monotonic time of the last good news: an answered probe, a completed handshake, or the start of the first attempt (-1: none yet) */
  goodAt = -1;
  /** when this endpoint last told the peer its handshakes fail here (NEXT_PSK_NOTICE) */
  noticeAt = -Infinity;
  current: Session | undefined;
  previous: Session | undefined;
  /** responder session waiting for key confirmation */
  next: Session | undefined;
  handshake: InitiatorState | undefined;
  handshakeSentAt = 0;
  handshakeRetryAt = 0;
  handshakeStartedAt = 0;
  handshakeAttempts = 0;
  cookie: Buffer | undefined;
  cookieAt = 0;
  greatestTimestamp = -1;
  lastTimestampSent = 0;
  lastReceivedAt = -1;
  lastProbeAt = -Infinity;
  probeId = 0;
  connectedSince = -1;
  readonly queue: Buffer[] = [];
  readonly tx: DirectionCounters = { bytes: 0, packets: 0 };
  readonly rx: DirectionCounters = { bytes: 0, packets: 0 };
  handshakes = 0;
  rekeys = 0;
  /** FEATURE_* bits the peer advertised in its last handshake */
  features = 0;
  /** fragmented messages from this peer being reassembled (created on the first fragment) */
  reassembly: Reassembler | undefined;

  constructor(cfg: PeerConfig, health: HealthLimits = HEALTH_DEFAULTS) {
    this.health = new PeerHealth(health);
    this.clusterId = cfg.clusterId;
    this.subnets = cfg.subnets.map((s, i) => parseCidr(s, `peers[${cfg.clusterId}].subnets[${i}]`));
    this.configuredAddress = cfg.address;
    this.configuredPort = cfg.port ?? TUNNEL_PORT;
    this.address = cfg.address;
    this.port = this.configuredPort;
    this.alternates = [...new Set(cfg.alternates ?? [])];
  }

  /** the average RTT of the answered probes of the health window */
  get rttAvgMs(): number | undefined {
    return this.health.stats()?.avgMs;
  }
}

/** Plain-object status of one peer: the source of connection records. */
export interface PeerRecord {
  cluster: string;
  remoteIP: string;
  remotePort: number;
  nat: boolean;
  subnets: string[];
  status: PeerStatus;
  /** why it is not connected: psk-mismatch, no-handshake-answer, loss 100%, peer-dead ('' when connected) */
  reason: HealthReason | '';
  statusMessage: string;
  /** when the status or reason last changed (RFC 3339, as a Kubernetes condition's lastTransitionTime); null before the first */
  lastTransitionTime: string | null;
  rttAvgMs: number | null;
  rttLastMs: number | null;
  /** last, min, avg, max and standard deviation of the answered probes' RTT (the health window), null before the first */
  latency: Omit<LatencyStats, 'samples'> | null;
  /** probes of the health window that got no answer in time, as a percentage ("0%", "30%", "100%"); '' before any is due */
  loss: string;
  /** ms since the last answered probe (null: none) */
  lastAnsweredAgoMs: number | null;
  connectedSince: number | null;
  txBytes: number;
  txPackets: number;
  rxBytes: number;
  rxPackets: number;
  handshakes: number;
  rekeys: number;
}

const TICK_MS = 100;
const PSK_NOTICE_BODY = Buffer.alloc(1);
const FENCE_NOTICE_BODY = Buffer.alloc(1);
/**
 * Unanswered initiations (while the session still answers probes) taken as a PSK mismatch:
 * at 30 % loss, 8 lost handshakes in a row (either message) happen with p ≈ 0.5^8 (0.4 %).
 */
/** the longest wait between two initiations to a peer with no session (WireGuard's REKEY_TIMEOUT) */
export const HANDSHAKE_BACKOFF_MAX_MS = 5_000;
const MISMATCH_ATTEMPTS = 8;

export class TunnelEndpoint {
  readonly clusterId: string;
  readonly counters = new TunnelCounters();
  readonly peers: Peer[];
  private readonly byCluster = new Map<string, Peer>();
  private readonly sessions = new Map<number, { session: Session; peer: Peer }>();
  private psk: Buffer;
  private mac1Key: Buffer;
  private cookieKey: Buffer;
  private cookies: CookieChecker;
  private readonly limits: TunnelLimits;
  private readonly clock: Clock;
  private readonly maxVersion: number;
  readonly features: number;
  private initsThisSecond = 0;
  private initsSecond = 0;
  private timer: { cancel(): void } | undefined;
  private closed = false;
  /** start() ran: this endpoint initiates (an HA gateway's passive one never does) */
  private started = false;
  private readonly maxDatagram: number;
  private readonly sendCopies: boolean;
  /** reused when sendCopies: data header, fragment header, and the part arrays around them */
  private readonly dataHeader = Buffer.alloc(DATA_HEADER);
  private readonly fragHeader = Buffer.alloc(FRAG_HEADER);
  private readonly parts2: Buffer[];
  private readonly parts3: Buffer[];
  private readonly healthLimits: HealthLimits;

  constructor(private readonly opts: TunnelOptions) {
    this.clusterId = opts.clusterId;
    this.clock = opts.clock;
    this.psk = pskFromText(opts.psk);
    this.mac1Key = mac1Key(this.psk);
    this.cookieKey = cookieKey(this.psk);
    this.cookies = new CookieChecker(this.cookieKey, opts.clock.monotonic());
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.maxVersion = opts.maxVersion ?? PROTOCOL_VERSION;
    // every endpoint of this version understands the PSK-mismatch and fence notices
    this.features = (opts.features ?? 0) | FEATURE_HEALTH | FEATURE_FENCE_NOTICE;
    this.maxDatagram = opts.maxDatagram ?? DEFAULT_MAX_DATAGRAM;
    this.sendCopies = opts.sendCopies === true;
    this.parts2 = [this.fragHeader, this.fragHeader];
    this.parts3 = [this.fragHeader, this.fragHeader, this.fragHeader];
    this.healthLimits = { ...HEALTH_DEFAULTS, ...opts.health, probeMs: this.limits.keepaliveMs };
    this.peers = opts.peers.map((p) => new Peer(p, this.healthLimits));
    for (const p of this.peers) this.byCluster.set(p.clusterId, p);
  }

  /** Start handshaking with every peer and run the timers. */
  start(): void {
    this.started = true;
    for (const p of this.peers) this.initiate(p);
    this.arm();
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
    // native sessions' keys are wiped (nothing is sealed or opened after close)
    for (const e of this.sessions.values()) e.session.close();
  }

  /** the limits in force (defaults and options) */
  get limitsInUse(): Readonly<TunnelLimits> {
    return this.limits;
  }

  /**
   * HA / reconfiguration: the remote cluster's active gateway moved. Sessions with the
   * old gateway are dropped and a handshake starts at once with the new endpoint.
   */
  setPeerEndpoint(clusterId: string, address: string, port = TUNNEL_PORT): void {
    const peer = this.byCluster.get(clusterId);
    if (!peer) throw E.tunnelPeerUnknown(clusterId, `${address}:${port}`);
    if (peer.configuredAddress === address && peer.configuredPort === port && peer.status === 'connected') return;
    peer.configuredAddress = address;
    peer.configuredPort = port;
    peer.address = address;
    peer.port = port;
    for (const key of ['previous', 'current', 'next'] as const) {
      const x = peer[key];
      if (x) this.forget(x);
      peer[key] = undefined;
    }
    peer.connectedSince = -1;
    peer.health.reset();
    peer.goodAt = -1;
    peer.lastReceivedAt = -1;
    peer.handshake = undefined;
    this.initiate(peer);
    this.evaluate(peer, this.clock.monotonic());
  }

  /**
   * The cluster re-joined (a new broker-info PSK). New handshakes use the new PSK at once and
   * one starts with every peer; established sessions keep carrying traffic until a handshake
   * under the new PSK replaces them or they expire, so a peer that has not switched yet sees
   * no gap until its own reload. Returns false when the PSK did not change.
   */
  setPsk(text: string): boolean {
    const next = pskFromText(text);
    if (next.equals(this.psk)) return false;
    this.psk = next;
    this.mac1Key = mac1Key(next);
    this.cookieKey = cookieKey(next);
    this.cookies = new CookieChecker(this.cookieKey, this.clock.monotonic());
    for (const p of this.peers) {
      p.handshake = undefined;
      p.cookie = undefined;
      this.initiate(p);
    }
    return true;
  }

  /** the endpoint's clock (monotonic ms): the time base of its peers' health */
  monotonic(): number {
    return this.clock.monotonic();
  }

  peer(clusterId: string): Peer | undefined {
    return this.byCluster.get(clusterId);
  }

  /** The peer whose subnets contain `dst` (an IPv4 address as an unsigned integer). */
  route(dst: number): Peer | undefined {
    const peers = this.peers;
    for (let i = 0; i < peers.length; i++) {
      const p = peers[i] as Peer;
      const subnets = p.subnets;
      for (let j = 0; j < subnets.length; j++) if (cidrContains(subnets[j] as Cidr, dst)) return p;
    }
    return undefined;
  }

  records(): PeerRecord[] {
    this.opts.onSync?.();
    const now = this.clock.monotonic();
    return this.peers.map((p) => this.record(p, now));
  }

  private record(p: Peer, now: number): PeerRecord {
    this.evaluate(p, now);
    const st = p.health.stats();
    return {
      cluster: p.clusterId,
      remoteIP: p.address,
      remotePort: p.port,
      nat: p.address !== p.configuredAddress || p.port !== p.configuredPort,
      subnets: p.subnets.map((c) => c.text),
      status: p.status,
      reason: p.reason,
      statusMessage: p.lastError ?? (p.status === 'connected' ? 'connection established' : 'handshake in progress'),
      lastTransitionTime: p.transitionAt >= 0 ? new Date(p.transitionAt).toISOString() : null,
      rttAvgMs: st?.avgMs ?? null,
      rttLastMs: st?.lastMs ?? null,
      latency: st ? { lastMs: st.lastMs, minMs: st.minMs, avgMs: st.avgMs, maxMs: st.maxMs, stddevMs: st.stddevMs } : null,
      loss: lossText(p.health.loss(now)),
      lastAnsweredAgoMs: p.health.lastAnsweredAt >= 0 ? Math.round(now - p.health.lastAnsweredAt) : null,
      connectedSince: p.connectedSince >= 0 ? p.connectedSince : null,
      txBytes: p.tx.bytes,
      txPackets: p.tx.packets,
      rxBytes: p.rx.bytes,
      rxPackets: p.rx.packets,
      handshakes: p.handshakes,
      rekeys: p.rekeys,
    };
  }

  // --- sending ------------------------------------------------------------------------

  /**
   * Whether `len` bytes sealed for `peer` leave as one datagram or as fragments the peer
   * takes (at most MAX_FRAGMENTS: a receiver drops a message of more). A super-packet that
   * does not fit is cut into segments by its sender instead (the gateway's forwardVnet).
   */
  fitsOneMessage(peer: Peer, len: number): boolean {
    const body = len + TAG_LEN;
    if (DATA_HEADER + body <= this.maxDatagram) return true;
    if ((peer.features & FEATURE_FRAG) === 0) return true; // one datagram, fragmented by IP on the way
    return body <= MAX_FRAGMENTED_BODY && fragmentPlan(body, this.maxDatagram)[0] <= MAX_FRAGMENTS;
  }

  /** Encrypt an IPv4 packet to `peer`. Returns false when it was queued or dropped. */
  sendPacket(peer: Peer, packet: Buffer, next = NEXT_IPV4): boolean {
    if (this.closed) return false;
    if (!this.fitsOneMessage(peer, packet.length)) {
      // more fragments than a receiver takes: nothing the peer could use is sent (counted)
      this.counters.drops.fragment++;
      return false;
    }
    const s = peer.current;
    const now = this.clock.monotonic();
    if (s === undefined || s.sendSeq >= this.limits.rejectAfterPackets || now - s.createdAt >= this.limits.rejectAfterMs) {
      if (peer.queue.length < this.limits.queueLimit && next === NEXT_IPV4) peer.queue.push(Buffer.from(packet));
      if (peer.handshake === undefined) this.initiate(peer);
      return false;
    }
    this.seal(peer, s, next, packet);
    if (s.sendSeq >= this.limits.rekeyAfterPackets && peer.handshake === undefined) this.initiate(peer);
    return true;
  }

  private seal(peer: Peer, s: Session, next: number, payload: Buffer): void {
    const seq = s.takeSeq();
    const header = this.sendCopies ? this.dataHeader : Buffer.allocUnsafe(DATA_HEADER);
    writeDataHeader(header, 0, next, s.remoteIndex, seq);
    const sealed = s.seal(header, seq, payload);
    if (next === NEXT_IPV4 || next === NEXT_IPV4_VNET) {
      peer.tx.packets++;
      peer.tx.bytes += payload.length;
    }
    const ct = sealed[0];
    if (DATA_HEADER + ct.length + TAG_LEN > this.maxDatagram && (peer.features & FEATURE_FRAG) !== 0 && ct.length + TAG_LEN <= MAX_FRAGMENTED_BODY) {
      this.sendFragments(peer, next, s.remoteIndex, seq, ct, sealed[1]);
      return;
    }
    if (this.sendCopies) {
      const parts = this.parts3;
      parts[0] = header;
      parts[1] = ct;
      parts[2] = sealed[1];
      this.opts.send(parts, peer.port, peer.address);
      return;
    }
    this.opts.send([header, ct, sealed[1]], peer.port, peer.address);
  }

  /**
   * One sealed message (the AEAD ran once over the whole payload, associated data = the
   * type-4 header) as fragments of `maxDatagram` bytes: every fragment carries `size`
   * bytes of ciphertext ‖ tag but the last, which carries the rest (equal sizes suit UDP GSO).
   */
  private sendFragments(peer: Peer, next: number, spi: number, seq: number, ct: Buffer, tag: Buffer): void {
    const ctLen = ct.length;
    const body = ctLen + TAG_LEN;
    const size = this.maxDatagram - FRAG_HEADER;
    const count = Math.ceil(body / size);
    const send = this.opts.send;
    const reuse = this.sendCopies;
    for (let i = 0; i < count; i++) {
      const start = i * size;
      const end = start + size < body ? start + size : body;
      const h = reuse ? this.fragHeader : Buffer.allocUnsafe(FRAG_HEADER);
      writeFragmentHeader(h, 0, next, i, count, spi, seq, size);
      let parts: Buffer[];
      if (end <= ctLen) {
        parts = reuse ? this.parts2 : [h, h];
        parts[1] = ct.subarray(start, end);
      } else if (start >= ctLen) {
        parts = reuse ? this.parts2 : [h, h];
        parts[1] = tag.subarray(start - ctLen, end - ctLen);
      } else {
        parts = reuse ? this.parts3 : [h, h, h];
        parts[1] = ct.subarray(start);
        parts[2] = end - ctLen === TAG_LEN ? tag : tag.subarray(0, end - ctLen);
      }
      parts[0] = h;
      send(parts, peer.port, peer.address);
    }
    this.counters.fragmentsSent += count;
  }

  private sendProbe(peer: Peer, s: Session, next: number, body: Buffer): void {
    this.seal(peer, s, next, body);
  }

  // --- receiving ----------------------------------------------------------------------

  /** One datagram from the wire. Never throws: bad input is dropped and counted. */
  receive(msg: Buffer, address: string, port: number): void {
    if (this.closed) return;
    if (msg.length === 0) {
      this.counters.drops.malformed++;
      return;
    }
    const type = msg[0];
    try {
      if (type === TYPE_DATA) this.receiveData(msg, address, port);
      else if (type === TYPE_FRAGMENT) this.receiveFragment(msg, address, port);
      else if (type === TYPE_INIT) this.receiveInit(msg, address, port);
      else if (type === TYPE_RESPONSE) this.receiveResponse(msg, address, port);
      else if (type === TYPE_COOKIE) this.receiveCookie(msg);
      else this.counters.drops.malformed++;
    } catch (err) {
      // codecs throw StraitError (STRAIT_ERR_TUNNEL_MALFORMED) on bad input
      this.counters.drops.malformed++;
      if (!(err instanceof Error) || !('code' in err)) this.event('error', `unexpected error on a datagram from ${address}:${port}: ${String(err)}`);
    }
  }

  private receiveData(msg: Buffer, address: string, port: number): void {
    // Inline header parse (same rules as wire/tunnel dataPacket.decode, no allocation).
    if (msg.length < DATA_HEADER + TAG_LEN || msg[2] !== 0 || msg[3] !== 0 || (msg[1] as number) > NEXT_MAX) {
      this.counters.drops.malformed++;
      return;
    }
    const hi = msg.readUInt32BE(8);
    if (hi >= 0x200000) {
      this.counters.drops.malformed++;
      return;
    }
    const seq = hi * 0x100000000 + msg.readUInt32BE(12);
    const now = this.clock.monotonic();
    const entry = this.admit(msg.readUInt32BE(4), seq, now);
    if (entry !== undefined) this.accept(msg, entry.session, entry.peer, seq, now, address, port);
  }

  /**
   * The session of `spi` if it may still take message `seq`: known, not past its limits, and
   * not a replay by the window's cheap check (before any decryption or copy). Otherwise
   * undefined, with the drop counted.
   */
  private admit(spi: number, seq: number, now: number): { session: Session; peer: Peer } | undefined {
    const entry = this.sessions.get(spi);
    if (entry === undefined) {
      this.counters.drops.stale++;
      return undefined;
    }
    const s = entry.session;
    if (now - s.createdAt >= this.limits.rejectAfterMs || seq >= this.limits.rejectAfterPackets) {
      this.counters.drops.stale++;
      return undefined;
    }
    if (!s.replay.check(seq)) {
      this.counters.drops.replay++;
      return undefined;
    }
    return entry;
  }

  /**
   * A fragment (type 5): checked, then stored for reassembly. Nothing of it is trusted
   * until the whole message passes the AEAD check, exactly as a type-4 packet whose
   * header is rebuilt from the fragment's next header, SPI and sequence number.
   */
  private receiveFragment(msg: Buffer, address: string, port: number): void {
    const len = msg.length;
    const rule = (this.features & FEATURE_FRAG) === 0 ? 'fragments were not negotiated' : fragmentRule(msg, 0, len);
    if (rule !== '') {
      this.counters.drops.malformed++;
      this.authEvent(`malformed fragment of ${len} bytes from ${address}:${port}: ${rule}`, undefined, 'STRAIT_ERR_TUNNEL_MALFORMED');
      return;
    }
    const spi = msg.readUInt32BE(4);
    const seq = msg.readUInt32BE(8) * 0x100000000 + msg.readUInt32BE(12);
    const now = this.clock.monotonic();
    // cheap filter before any copy: a message already accepted (or too old) is a replay
    const entry = this.admit(spi, seq, now);
    if (entry === undefined) return;
    const s = entry.session;
    const peer = entry.peer;
    this.counters.fragmentsReceived++;
    let r = peer.reassembly;
    if (r === undefined) {
      r = new Reassembler(this.limits.reassemblySlots, MAX_FRAGMENTED_BODY, DATA_HEADER, this.limits.reassemblyTimeoutMs);
      peer.reassembly = r;
    }
    const given = r.counters.evicted + r.counters.expired;
    const slot = r.add(spi, seq, msg[2] as number, msg[3] as number, msg.readUInt16BE(16), msg, FRAG_HEADER, len - FRAG_HEADER, now);
    this.counters.drops.reassembly += r.counters.evicted + r.counters.expired - given;
    if (slot < 0) {
      if (slot !== -1) this.counters.drops.fragment++;
      return;
    }
    const buf = r.buffer(slot);
    const body = r.length(slot);
    r.release(slot);
    if (body < TAG_LEN) {
      this.counters.drops.malformed++;
      return;
    }
    // the associated data is the type-4 header this message would have had unfragmented
    writeDataHeader(buf, 0, msg[1] as number, spi, seq);
    this.counters.reassembled++;
    this.accept(buf.subarray(0, DATA_HEADER + body), s, peer, seq, now, address, port);
  }

  /** Authenticate and deliver a whole data message (header + ciphertext + tag) whose sequence passed the window check. */
  private accept(msg: Buffer, s: Session, peer: Peer, seq: number, now: number, address: string, port: number): void {
    const plain = s.open(msg, seq);
    if (plain === undefined) {
      this.counters.drops.auth++;
      return;
    }
    if (!s.replay.update(seq)) {
      this.counters.drops.replay++;
      return;
    }
    // a fenced gateway's last word: it moves nothing (not the peer's address, not its health)
    // (a late one from a gateway already replaced is undone by the next answered probe)
    if (msg[1] === NEXT_FENCE_NOTICE) {
      peer.health.peerFenced(now);
      this.evaluate(peer, now);
      return;
    }
    if (!s.confirmed) this.confirm(peer, s);
    peer.lastReceivedAt = now;
    if (peer.address !== address || peer.port !== port) {
      // roaming / NAT: follow the source of authenticated packets only
      peer.address = address;
      peer.port = port;
      this.opts.onPeerChange?.(peer);
    }
    if (peer.connectedSince < 0) {
      this.markConnected(peer);
      this.opts.onPeerChange?.(peer);
    }
    const next = msg[1] as number;
    if (next === NEXT_IPV4 || next === NEXT_IPV4_VNET) {
      if (next === NEXT_IPV4_VNET && (this.features & FEATURE_VNET) === 0) {
        this.counters.drops.malformed++;
        return;
      }
      peer.rx.packets++;
      peer.rx.bytes += plain.length;
      this.opts.deliver(plain, peer, next);
    } else if (next === NEXT_PROBE) {
      if (plain.length === 16 && peer.current) this.sendProbe(peer, peer.current, NEXT_PROBE_REPLY, plain);
    } else if (next === NEXT_PSK_NOTICE) {
      // the peer, over the session made before, says our new handshakes fail its mac1 check
      if (peer.handshake !== undefined) {
        peer.health.pskMismatch(now, `${peer.clusterId} reports that this gateway's handshakes do not authenticate under its PSK`);
        this.evaluate(peer, now);
      }
    } else if (plain.length === 16) {
      // a probe reply: good news only when it answers one of our outstanding probes
      if (peer.health.probeAnswered(plain.readDoubleBE(0), now) >= 0) {
        peer.goodAt = now;
        if (peer.status !== 'connected') this.evaluate(peer, now);
      }
    }
  }

  private confirm(peer: Peer, s: Session): void {
    s.confirmed = true;
    if (peer.next === s) peer.next = undefined;
    this.install(peer, s);
    // the responder's first RTT sample now, not a keepalive later (records show the RTT at once)
    if (peer.health.stats() === undefined) this.probe(peer, s, this.clock.monotonic());
  }

  private install(peer: Peer, s: Session): void {
    // a handshake under this endpoint's PSK completed: the peer has the same PSK now, and an
    // initiation of ours still pending is moot (the rekey timer starts the next one)
    peer.goodAt = this.clock.monotonic();
    peer.health.mismatchAt = -Infinity;
    peer.health.fencedAt = -Infinity;
    peer.handshake = undefined;
    peer.handshakeAttempts = 0;
    if (peer.previous) this.forget(peer.previous);
    if (peer.current) {
      peer.rekeys++;
      this.counters.rekeys++;
    }
    peer.previous = peer.current;
    peer.current = s;
    this.opts.onPeerChange?.(peer);
    this.flushQueue(peer);
  }

  /** A session leaves every role: out of the index, its keys wiped. */
  private forget(s: Session): void {
    if (this.sessions.get(s.localIndex)?.session === s) this.sessions.delete(s.localIndex);
    s.close();
  }

  private flushQueue(peer: Peer): void {
    const s = peer.current;
    if (!s) return;
    while (peer.queue.length > 0) this.seal(peer, s, NEXT_IPV4, peer.queue.shift() as Buffer);
  }

  private markConnected(peer: Peer): void {
    if (peer.connectedSince < 0) peer.connectedSince = this.clock.now();
    this.evaluate(peer, this.clock.monotonic());
  }

  /**
   * The status from what the data path did (docs/faults.md): `connected` while a session
   * exists and a probe was answered (or the session was made) within errorAfterMs;
   * `error` with a reason otherwise: psk-mismatch (evidence of a different PSK at the peer
   * within health.mismatchHoldMs, even while a session made under the previous PSK still
   * answers: it ends at the next rekey), loss 100% (a session, no answered probe),
   * no-handshake-answer (no session, initiations unanswered for errorAfterMs);
   * `connecting` while a first handshake is younger than that. Changes are events.
   */
  private evaluate(peer: Peer, now: number): void {
    const h = peer.health;
    const quiet = peer.goodAt >= 0 ? now - peer.goodAt : 0;
    const s = peer.current;
    let status: PeerStatus;
    let reason: HealthReason | '' = '';
    let message: string | undefined;
    if (h.mismatchSeen(now)) {
      status = 'error';
      reason = 'psk-mismatch';
      message =
        `psk-mismatch: ${h.mismatchWhat}; ${peer.clusterId} joined with a different broker-info: join both clusters with the same file` +
        (s && quiet < h.limits.errorAfterMs ? ' (the session made under the previous PSK still carries traffic until its next rekey)' : '');
    } else if (h.fencedSeen(now)) {
      status = 'error';
      reason = 'peer fenced';
      message = `peer fenced: ${peer.clusterId}'s gateway at ${peer.address} lost its HA lease and sends nothing into the tunnel; the cluster's gateway that takes the lease over connects next`;
    } else if (s && quiet < h.limits.errorAfterMs) {
      status = 'connected';
    } else if (s) {
      status = 'error';
      reason = 'loss 100%';
      message = `loss 100%: no probe answered for ${Math.round(quiet)} ms (${peer.address}:${peer.port})`;
    } else if (peer.goodAt >= 0 && quiet >= h.limits.errorAfterMs) {
      status = 'error';
      reason = 'no-handshake-answer';
      message = `no-handshake-answer: ${peer.handshakeAttempts} handshake initiation(s) to ${peer.address}:${peer.port} unanswered, nothing authenticated for ${Math.round(quiet)} ms`;
    } else {
      status = 'connecting';
    }
    if (status === peer.status && reason === peer.reason) {
      peer.lastError = message;
      return;
    }
    peer.status = status;
    peer.reason = reason;
    peer.lastError = message;
    peer.transitionAt = this.clock.now();
    if (status === 'connected') this.event('info', `tunnel to ${peer.clusterId} at ${peer.address}:${peer.port} is connected`, peer);
    else if (status === 'error')
      this.event(
        'error',
        `tunnel to ${peer.clusterId}: ${message ?? reason}`,
        peer,
        reason === 'psk-mismatch' ? 'STRAIT_ERR_TUNNEL_AUTH' : reason === 'peer fenced' ? undefined : 'STRAIT_ERR_TUNNEL_HANDSHAKE_TIMEOUT',
      );
  }

  /**
   * HA: this gateway is fenced (it lost its lease or could not renew it) and sends nothing
   * more into the tunnel; tell every peer that understands it over its current session
   * (next header 5), so its status says `peer fenced` rather than a loss. The caller lets
   * these datagrams past its fence. Returns how many were sent.
   */
  noticeFenced(): number {
    if (this.closed) return 0;
    let n = 0;
    for (const p of this.peers) {
      const s = p.current;
      if (s === undefined || (p.features & FEATURE_FENCE_NOTICE) === 0) continue;
      this.seal(p, s, NEXT_FENCE_NOTICE, FENCE_NOTICE_BODY);
      n++;
    }
    return n;
  }

  /**
   * Evidence that `address` (a peer's) uses a different PSK: its handshakes fail mac1 or do
   * not decrypt here. A peer that still has a session with us (made under the previous PSK)
   * and understands it is told so over that session, at most once a second.
   */
  private mismatchFrom(address: string, what: string, known?: Peer): void {
    const now = this.clock.monotonic();
    for (const p of this.peers) {
      if (p === known || p.address === address || p.configuredAddress === address) {
        p.health.pskMismatch(now, `${what} from ${address} does not authenticate under this gateway's PSK`);
        this.evaluate(p, now);
        const s = p.current;
        if (s !== undefined && (p.features & FEATURE_HEALTH) !== 0 && now - p.noticeAt >= 1000) {
          p.noticeAt = now;
          this.seal(p, s, NEXT_PSK_NOTICE, PSK_NOTICE_BODY);
        }
      }
    }
  }

  private lastAuthEventAt = -Infinity;

  /** Auth warnings at most once a second: a flood of forgeries must not flood the log. */
  private authEvent(msg: string, peer?: Peer, code = 'STRAIT_ERR_TUNNEL_AUTH'): void {
    const now = this.clock.monotonic();
    if (now - this.lastAuthEventAt < 1000) return;
    this.lastAuthEventAt = now;
    this.event('warn', msg, peer, code);
  }

  private checkMac1(msg: Buffer, address: string, port: number, what: string): boolean {
    const end = msg.length - 32;
    if (!macEqual(mac(this.mac1Key, msg, end), msg.subarray(end, end + 16))) {
      this.counters.drops.auth++;
      this.mismatchFrom(address, `a ${what}`);
      this.authEvent(E.tunnelAuth(`${address}:${port}`, `${what} has an invalid mac1: the sender uses a different PSK (or the packet was forged)`).message);
      return false;
    }
    return true;
  }

  private underLoad(): boolean {
    const sec = Math.floor(this.clock.monotonic() / 1000);
    if (sec !== this.initsSecond) {
      this.initsSecond = sec;
      this.initsThisSecond = 0;
    }
    return ++this.initsThisSecond > this.limits.handshakeRateLimit;
  }

  private receiveInit(msg: Buffer, address: string, port: number): void {
    const m = handshakeInit.decode(msg, 0);
    if (!this.checkMac1(msg, address, port, 'handshake initiation')) return;
    const now = this.clock.monotonic();
    if (this.underLoad() && !this.cookies.checkMac2(msg, address, port, now)) {
      const c = this.cookies.seal(address, port, m.mac1, now);
      this.counters.cookiesSent++;
      this.opts.send(cookieReply.encode({ version: m.version, receiverIndex: m.senderIndex, nonce: c.nonce, cookie: c.cookie }), port, address);
      return;
    }
    if (m.version < 1 || m.version > this.maxVersion) {
      this.counters.drops.malformed++;
      return;
    }
    const got = consumeInitiation(this.psk, m);
    if (!got) {
      this.counters.drops.auth++;
      this.mismatchFrom(address, 'a handshake initiation');
      this.authEvent(E.tunnelAuth(`${address}:${port}`, 'handshake initiation does not decrypt: the sender uses a different PSK').message);
      return;
    }
    const peer = this.byCluster.get(got.payload.clusterId);
    if (!peer) {
      this.counters.drops.auth++;
      this.authEvent(E.tunnelPeerUnknown(got.payload.clusterId, `${address}:${port}`).message, undefined, 'STRAIT_ERR_TUNNEL_PEER_UNKNOWN');
      return;
    }
    if (got.payload.timestamp <= peer.greatestTimestamp) {
      this.counters.drops.replay++;
      return;
    }
    // downgrade protection: we must answer with the highest common version, and the
    // version of this message must be that version (it is bound into h by the prologue)
    const chosen = Math.min(this.maxVersion, got.payload.maxVersion);
    if (m.version !== chosen) {
      this.counters.drops.auth++;
      this.event('warn', `handshake from ${peer.clusterId} uses version ${m.version} although both sides speak ${chosen}: possible downgrade, dropped`, peer);
      return;
    }
    const localIndex = this.newIndex();
    const r = createResponse({
      ss: got.ss,
      remoteEphemeral: m.ephemeral,
      mac1Key: this.mac1Key,
      version: chosen,
      localIndex,
      remoteIndex: m.senderIndex,
      clusterId: this.clusterId,
      cookie: undefined,
      features: this.features,
    });
    if (!r) {
      this.counters.drops.auth++;
      return;
    }
    peer.greatestTimestamp = got.payload.timestamp;
    peer.features = got.payload.features;
    if (peer.next) this.forget(peer.next);
    const s = new Session(localIndex, m.senderIndex, false, now, r.keys, this.opts.sessionCrypto);
    peer.next = s;
    this.sessions.set(localIndex, { session: s, peer });
    peer.address = address;
    peer.port = port;
    peer.handshakes++;
    this.counters.handshakesResponded++;
    this.opts.onPeerChange?.(peer);
    this.opts.send(r.msg, port, address);
  }

  private receiveResponse(msg: Buffer, address: string, port: number): void {
    const m = handshakeResponse.decode(msg, 0);
    if (!this.checkMac1(msg, address, port, 'handshake response')) return;
    let peer: Peer | undefined;
    for (const p of this.peers) if (p.handshake && p.handshake.localIndex === m.receiverIndex) peer = p;
    if (!peer || !peer.handshake) {
      this.counters.drops.stale++;
      return;
    }
    const st = peer.handshake;
    const got = consumeResponse(st, m);
    if (!got) {
      this.counters.drops.auth++;
      this.mismatchFrom(address, 'a handshake response', peer);
      this.authEvent(E.tunnelAuth(`${address}:${port}`, 'handshake response does not decrypt: the responder uses a different PSK').message, peer);
      return;
    }
    if (got.payload.clusterId !== peer.clusterId) {
      this.counters.drops.auth++;
      this.event('warn', `handshake response from ${address}:${port} names cluster ${got.payload.clusterId}, expected ${peer.clusterId}; dropped`, peer);
      return;
    }
    if (got.payload.version !== m.version || got.payload.version !== st.version) {
      this.counters.drops.auth++;
      return;
    }
    const now = this.clock.monotonic();
    peer.handshake = undefined;
    peer.handshakeAttempts = 0;
    peer.features = got.payload.features;
    const s = new Session(st.localIndex, m.senderIndex, true, now, got.keys, this.opts.sessionCrypto);
    this.sessions.set(st.localIndex, { session: s, peer });
    peer.address = address;
    peer.port = port;
    peer.handshakes++;
    peer.lastReceivedAt = now;
    this.counters.handshakesCompleted++;
    this.install(peer, s);
    this.markConnected(peer);
    // key confirmation for the responder, and a first RTT sample
    this.probe(peer, s, now);
  }

  private receiveCookie(msg: Buffer): void {
    const m = cookieReply.decode(msg, 0);
    for (const p of this.peers) {
      if (p.handshake && p.handshake.localIndex === m.receiverIndex) {
        const cookie = openCookie(this.cookieKey, m.nonce, m.cookie, p.handshake.mac1);
        if (!cookie) {
          this.counters.drops.auth++;
          return;
        }
        p.cookie = cookie;
        p.cookieAt = this.clock.monotonic();
        return;
      }
    }
    this.counters.drops.stale++;
  }

  // --- handshakes and timers ----------------------------------------------------------------

  private newIndex(): number {
    for (;;) {
      const i = randomBytes(4).readUInt32BE(0);
      if (i !== 0 && !this.sessions.has(i)) return i;
    }
  }

  /** Send (or resend) an initiation to `peer`. */
  initiate(peer: Peer): void {
    if (this.closed) return;
    const now = this.clock.monotonic();
    if (peer.handshake === undefined) {
      peer.handshakeStartedAt = now;
      peer.handshakeAttempts = 0;
    }
    if (peer.goodAt < 0) peer.goodAt = now;
    peer.handshakeAttempts++;
    const ts = Math.max(this.clock.now(), peer.lastTimestampSent + 1);
    peer.lastTimestampSent = ts;
    if (peer.cookie && now - peer.cookieAt >= 120_000) peer.cookie = undefined;
    const { msg, state } = createInitiation({
      psk: this.psk,
      mac1Key: this.mac1Key,
      version: this.maxVersion,
      maxVersion: this.maxVersion,
      localIndex: this.newIndex(),
      clusterId: this.clusterId,
      timestamp: ts,
      cookie: peer.cookie,
      features: this.features,
    });
    peer.handshake = state;
    peer.handshakeSentAt = now;
    // the wait before the next attempt: rekeyTimeoutMs while a session answers (a rekey: the
    // peer is there), doubling from it per unanswered attempt up to HANDSHAKE_BACKOFF_MAX_MS
    // while there is none (a peer not started yet, or gone: as IKE retransmits; the peer that
    // starts later initiates itself). Jitter up to a third, so two gateways do not retry in lockstep
    const base = this.limits.rekeyTimeoutMs;
    const wait = peer.current !== undefined ? base : Math.min(base * 2 ** Math.min(peer.handshakeAttempts - 1, 16), Math.max(base, HANDSHAKE_BACKOFF_MAX_MS));
    peer.handshakeRetryAt = now + wait + randomInt(0, Math.max(1, Math.floor(wait / 3)));
    this.counters.handshakesInitiated++;
    this.opts.send(msg, peer.port, peer.address);
    // no session: the address may be a gateway that is not the active one any more (a fresh
    // process, a reset to the configured address): the same initiation to the cluster's other
    // gateways; a passive one drops it, the active one answers, and its answer moves the address
    if (peer.current === undefined) for (const a of peer.alternates) if (a !== peer.address) this.opts.send(msg, peer.configuredPort, a);
  }

  /**
   * The remote cluster's gateway addresses other than the configured one (its Endpoint
   * records; standby gateways). New ones while there is no session are asked at once, once
   * this endpoint initiates at all (start(): a passive HA gateway keeps them for later and sends
   * nothing, or it would pull the peer's tunnel to itself).
   */
  setPeerAlternates(clusterId: string, addresses: readonly string[]): void {
    const peer = this.byCluster.get(clusterId);
    if (!peer) throw E.tunnelPeerUnknown(clusterId, addresses.join(','));
    const next = [...new Set(addresses)];
    const added = next.some((a) => !peer.alternates.includes(a) && a !== peer.address);
    peer.alternates = next;
    if (added && peer.current === undefined && this.started && !this.closed) this.initiate(peer);
  }

  private probe(peer: Peer, s: Session, now: number): void {
    peer.lastProbeAt = now;
    const b = Buffer.allocUnsafe(16);
    b.writeDoubleBE(++peer.probeId, 0);
    peer.health.probeSent(peer.probeId, now);
    b.writeDoubleBE(now, 8);
    this.sendProbe(peer, s, NEXT_PROBE, b);
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.clock.setTimeout(() => {
      this.tick();
      this.arm();
    }, TICK_MS);
  }

  /** Timers: handshake retries, rekey, expiry, keepalives, dead-peer detection. */
  tick(): void {
    this.opts.onSync?.();
    const now = this.clock.monotonic();
    const L = this.limits;
    this.tickPeers(now, L);
    const change = this.opts.onPeerChange;
    if (change !== undefined) for (const peer of this.peers) change(peer);
  }

  private tickPeers(now: number, L: TunnelLimits): void {
    for (const peer of this.peers) {
      const r = peer.reassembly;
      if (r !== undefined) this.counters.drops.reassembly += r.expire(now);
      // expire old sessions
      for (const key of ['previous', 'current', 'next'] as const) {
        const s = peer[key];
        if (s && now - s.createdAt >= L.rejectAfterMs) {
          this.forget(s);
          peer[key] = undefined;
        }
      }
      const s = peer.current;
      // dead-peer detection (also while a rekey handshake is pending)
      if (s && peer.lastReceivedAt >= 0 && now - peer.lastReceivedAt >= L.deadAfterMs) {
        this.event(
          'warn',
          `no authenticated packet from ${peer.clusterId} for ${Math.round(now - peer.lastReceivedAt)} ms: peer presumed dead, re-handshaking`,
          peer,
        );
        peer.connectedSince = -1;
        peer.health.reset();
        for (const key of ['previous', 'current', 'next'] as const) {
          const x = peer[key];
          if (x) this.forget(x);
          peer[key] = undefined;
        }
        peer.lastReceivedAt = -1;
        peer.handshake = undefined;
        peer.address = peer.configuredAddress;
        peer.port = peer.configuredPort;
        this.initiate(peer);
        this.evaluate(peer, now);
        continue;
      }
      if (peer.handshake) {
        if (now >= peer.handshakeRetryAt) {
          if (peer.handshakeAttempts === L.handshakeAttempts && peer.current === undefined) {
            const err = E.tunnelHandshakeTimeout(`${peer.clusterId} (${peer.address}:${peer.port})`, peer.handshakeAttempts);
            this.counters.handshakeTimeouts++;
            this.event('warn', err.message, peer, err.code);
          }
          this.initiate(peer);
        }
        // our initiations go unanswered while the session made before still answers probes:
        // the peer drops them (a different PSK: no mac1 match, so it says nothing)
        if (s && peer.handshakeAttempts >= MISMATCH_ATTEMPTS && peer.health.answering(now)) {
          peer.health.pskMismatch(
            now,
            `${peer.handshakeAttempts} handshake initiations to ${peer.address}:${peer.port} unanswered while the session made before answers probes: the peer uses a different PSK`,
          );
        }
      } else if (!s) {
        this.initiate(peer);
        this.evaluate(peer, now);
        continue;
      }
      this.evaluate(peer, now);
      if (!s) continue;
      // rekey by time (the session's initiator first; the responder later, as a fallback)
      const age = now - s.createdAt;
      if (!peer.handshake && age >= L.rekeyAfterMs + (s.isInitiator ? 0 : 2 * L.rekeyTimeoutMs)) this.initiate(peer);
      if (now - peer.lastProbeAt >= L.keepaliveMs) this.probe(peer, s, now);
    }
  }

  private event(level: TunnelEvent['level'], msg: string, peer?: Peer, code?: string): void {
    this.opts.onEvent?.({ level, msg, ...(peer ? { peer: peer.clusterId } : {}), ...(code ? { code } : {}) });
  }
}
