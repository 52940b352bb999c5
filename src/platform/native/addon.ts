// Loads strait's C addon (native/, built by `npm run build` with node-gyp against the
// installed Node headers). Only what Node cannot reach lives there.
import { createRequire } from 'node:module';

/**
 * Every entry point of the addon (native/src/entries.h lists them; one member each). A
 * missing or wrongly typed argument throws a TypeError with code STRAIT_ERR_USAGE naming
 * the argument; a failed system call an Error with code STRAIT_ERR_SYSTEM_TOOL.
 */
export interface NativeAddon {
  /** open (create) a TUN device; `offload`: virtio_net_hdr + TSO. [fd, the device's name] */
  tunOpen(name: string, offload?: boolean): [fd: number, name: string];
  /** read the device on the event loop into `buffer`; onPacket(bytes) per packet */
  tunStart(fd: number, buffer: Buffer, onPacket: (len: number) => void): void;
  /** write buffer[offset, offset+length): bytes written or -errno */
  tunWrite(fd: number, buffer: Buffer, offset: number, length: number): number;
  /** write hdr ‖ buffer[offset, offset+length): bytes written or -errno */
  tunWritev(fd: number, hdr: Buffer, buffer: Buffer, offset: number, length: number): number;
  tunClose(fd: number): void;
  /** a non-blocking UDP socket bound to address:port (0: any); [fd, the bound port] */
  udpOpen(address: string, port: number, bufBytes?: number): [fd: number, port: number];
  /** read on the event loop into `buffer`; onRecv(bytes, GRO segment size, IPv4 as an integer, port) */
  udpStart(fd: number, buffer: Buffer, onRecv: (len: number, seg: number, from: number, port: number) => void): void;
  /** send buffer[offset, offset+length) to addr:port, cut into segSize datagrams (0: one); bytes or -errno */
  udpSend(fd: number, buffer: Buffer, offset: number, length: number, segSize: number, addr: number, port: number): number;
  udpClose(fd: number): void;
  /** a listening TCP socket made inside a network namespace (a path or a netnsOpen fd); its fd */
  netnsListen(netns: string | number, address: string, port: number, backlog?: number, mark?: number): number;
  /** run fn on this thread inside a network namespace; fn's result */
  netnsCall<T>(netns: string | number, fn: () => T): T;
  /** an fd of a network namespace file */
  netnsOpen(netnsPath: string): number;
  /** a non-blocking TCP socket made inside the namespace nsFd; its fd */
  netnsSocket(nsFd: number, family: 4 | 6, mark: number): number;
  /** the original destination of a redirected connection (SO_ORIGINAL_DST) */
  getOriginalDst(fd: number): { address: string; port: number; family: 4 | 6 };
  /** start the TUN -> VXLAN pump thread of a device (native/src/pump.c) */
  pumpStart(
    tunFd: number,
    udpFd: number,
    hdrIpv4: Buffer,
    hdrVnet: Buffer,
    hdrStrait: Buffer,
    fragSize: number,
    maxDatagram: number,
    addr: number,
    port: number,
    msgId: number,
    counters: Float64Array,
  ): void;
  /** stop the pump of a device (-1: none); the next message id, or -1 when none ran */
  pumpStop(tunFd: number): number;
  /**
   * relay a TLS 1.3 connection's records natively (native/src/tlsrec.c); suite 1 (TLS_AES_128_GCM_SHA256)
   * or 2 (TLS_AES_256_GCM_SHA384). The relay's id, or why the pending bytes failed
   */
  tlsRelayStart(
    tlsFd: number,
    plainFd: number,
    suite: number,
    readSecret: Buffer,
    readSeq: number,
    writeSecret: Buffer,
    writeSeq: number,
    pending: Buffer,
    onEnd: (id: number, reason: string, errno: number) => void,
  ): number | string;
  /** true when the relay was running (no onEnd then) */
  tlsRelayStop(id: number): boolean;
  /** [active, started, ended, failed, recordsIn, recordsOut, tickets, keyUpdates] */
  tlsRelayStats(): Float64Array;
  /** key ‖ iv of a traffic secret */
  tlsTrafficKeys(suite: number, secret: Buffer): Buffer;
  /** content ‖ type of a record that opens under keyIv at seq, or null */
  tlsRecordOpen(suite: number, keyIv: Buffer, seq: number, record: Buffer): Buffer | null;
  /** flock(fd, LOCK_EX | LOCK_NB): true when taken (or held through this description), false when another holds it */
  flockTry(fd: number): boolean;
  /** a tunnel session's AES-256-GCM contexts, salts, send counter and replay window (native/src/session.c); its id */
  tunnelSessionNew(sendKey: Buffer, sendSalt: Buffer, recvKey: Buffer, recvSalt: Buffer, sendSeq: number): number;
  /**
   * op 0: replay check(value) -> 1/0; 1: replay update(value) -> 1/0; 2: highest accepted (-1 none);
   * 3: take `value` send sequence numbers -> the first; 4: the next send sequence; 5: close -> 1
   */
  tunnelSessionCtl(id: number, op: number, value: number): number;
  /** ciphertext ‖ tag of payload, the 16-byte data header as associated data (its sequence is the nonce's) */
  tunnelSeal(id: number, header: Buffer, payload: Uint8Array): Buffer;
  /** the plaintext of a data message (header ‖ ciphertext ‖ tag), or null when the tag fails */
  tunnelOpen(id: number, message: Buffer): Buffer | null;
  /** start the gateway's native data path thread (native/src/gwpath.c); its id */
  tunnelPathStart(
    udpFd: number,
    tunFd: number,
    vxlanFd: number,
    vxlanHdr: Buffer,
    agentPort: number,
    maxDatagram: number,
    features: number,
    rejectAfterPackets: number,
    reassemblyTimeoutMs: number,
    counters: Float64Array,
    onUp: (kind: number, bytes: Buffer, addr: number, port: number) => void,
    /** 1 (default): one thread; 2: the tunnel receive on one, the TUN and VXLAN reads (send) on another */
    threads?: number,
  ): number;
  /** stop it (the event-loop readers resume); whether it ran */
  tunnelPathStop(id: number): boolean;
  /** a peer of slot `slot`: its address, features, subnets ([network, mask]*), the session to send on (-1 none) */
  tunnelPathPeer(
    id: number,
    slot: number,
    addr: number,
    port: number,
    features: number,
    subnets: Float64Array,
    sendSession: number,
    sendSpi: number,
    sendLimit: number,
    sendTtlMs: number,
  ): void;
  /** register a session the thread may open (peerSlot -1: unregister) */
  tunnelPathSession(id: number, session: number, peerSlot: number, localIndex: number, fast: boolean, ttlMs: number): void;
  /** the node table: [network, mask, node address]* */
  tunnelPathNodes(id: number, rows: Float64Array): void;
  /** HA fence: nothing is sent after ttlMs from now (-1: no fence) */
  tunnelPathFence(id: number, ttlMs: number): void;
  /** fault injection for tests: 1 the threads end as on a poll error, 2 they stall until stopped */
  tunnelPathFault(id: number, kind: number): void;
}

let addon: NativeAddon | undefined;

export function native(): NativeAddon {
  if (!addon) {
    const require = createRequire(import.meta.url);
    // dist/src/platform/native/addon.js -> native/build/Release; STRAIT_NATIVE_ADDON: another
    // build of the same addon (scripts/native-asan.mjs runs the tests under the sanitizers so)
    const path = process.env['STRAIT_NATIVE_ADDON'] ?? '../../../../native/build/Release/strait_native.node';
    addon = require(path) as NativeAddon;
  }
  return addon;
}

/** whether the C addon loads here (the TLS relay is used only then) */
export function tlsOffloadAvailable(): boolean {
  try {
    return typeof native().tlsRelayStart === 'function';
  } catch {
    return false;
  }
}
