// UDP transport for the tunnel (4500) and VXLAN (4800) sockets.
//
// Fast path (strait's C addon, native/src/udp.c): datagrams sent during one event-loop
// turn to the same destination are copied back to back into one buffer and leave in a
// single sendmsg with UDP_SEGMENT (GSO) at the end of the turn (setImmediate); the
// socket receives with UDP_GRO, so one read returns a run of datagrams that are split
// here. On the wire every datagram is an ordinary datagram of its own size.
// Fallback (no addon, or STRAIT_UDP=dgram): node:dgram, one syscall per datagram.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { intToIpv4, ipv4ToInt } from '../../../base/config/index.js';
import { native } from '../../../platform/native/index.js';

export type DatagramHandler = (msg: Buffer, address: string, port: number) => void;
/**
 * A whole receive run at once: `len` bytes in `buf` of datagrams of `seg` bytes (the last may
 * be shorter), from one sender. True when it took them all; false leaves every datagram to
 * the DatagramHandler (it must then not have acted on any of them).
 */
export type RunHandler = (buf: Buffer, len: number, seg: number, address: string, port: number) => boolean;

/** Datagrams per GSO send (kernel UDP_MAX_SEGMENTS is at least 64). */
const MAX_SEGMENTS = 64;
/** Bytes per GSO send (an IPv4 datagram carries at most 65507 bytes of UDP payload). */
const BATCH_BYTES = 65000;
/** Largest datagram batched with GSO: bigger ones (above a 1500-byte path) go alone. */
const MAX_SEGMENT = 1472;

/** Transports with datagrams waiting for the end of the event-loop turn. */
const dirty: UdpTransport[] = [];
let flushScheduled = false;

function flushAll(): void {
  flushScheduled = false;
  for (let i = 0; i < dirty.length; i++) (dirty[i] as UdpTransport).flush();
  dirty.length = 0;
}

export class UdpTransport {
  /** datagrams and bytes accepted by send(), and GSO sends / plain sends made */
  readonly stats = { datagrams: 0, batches: 0, dropped: 0 };
  private readonly fd: number;
  private readonly socket: Socket | undefined;
  private readonly onMessage: DatagramHandler;
  private readonly onRun: RunHandler | undefined;
  // receive side
  private readonly rbuf: Buffer;
  private lastFromInt = -1;
  private lastFrom = '';
  // send side: one pending batch (same destination, equal-sized datagrams, last may be shorter)
  private readonly sbuf: Buffer;
  private pendLen = 0;
  private pendCount = 0;
  private pendSeg = 0;
  private pendClosed = false;
  private pendAddr = 0;
  private pendPort = 0;
  private lastToText = '';
  private lastToInt = 0;
  private isDirty = false;
  private closed = false;

  private constructor(
    fd: number,
    socket: Socket | undefined,
    onMessage: DatagramHandler,
    readonly address: string,
    readonly port: number,
    onRun?: RunHandler,
  ) {
    this.fd = fd;
    this.socket = socket;
    this.onMessage = onMessage;
    this.onRun = onRun;
    // the native socket's receive and send buffers (none for a dgram socket)
    this.rbuf = Buffer.alloc(fd >= 0 ? 65536 + 1024 : 0);
    this.sbuf = Buffer.alloc(fd >= 0 ? 65536 + 2048 : 0);
    if (fd >= 0) native().udpStart(fd, this.rbuf, this.onRecv);
  }

  /** Bind `address:port` (IPv4; port 0 = any) and call `onMessage` for every datagram. */
  static async bind(
    address: string,
    port: number,
    onMessage: DatagramHandler,
    opts: { bufferBytes?: number; dgram?: boolean; onRun?: RunHandler } = {},
  ): Promise<UdpTransport> {
    const bytes = opts.bufferBytes ?? 4 * 1024 * 1024;
    const addon = opts.dgram === true || process.env['STRAIT_UDP'] === 'dgram' || ipv4ToInt(address) === undefined ? undefined : tryNative();
    if (addon) {
      const [fd, bound] = addon.udpOpen(address, port, bytes);
      return new UdpTransport(fd, undefined, onMessage, address, bound, opts.onRun);
    }
    const socket = createSocket({ type: 'udp4', reuseAddr: false });
    socket.on('message', (msg: Buffer, rinfo: RemoteInfo) => onMessage(msg, rinfo.address, rinfo.port));
    // a send to an unreachable peer surfaces as an 'error' on some kernels: never fatal for a data plane
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    try {
      socket.setRecvBufferSize(bytes);
      socket.setSendBufferSize(bytes);
    } catch {
      // the kernel caps these at net.core.[rw]mem_max; what we get is fine
    }
    const a = socket.address();
    return new UdpTransport(-1, socket, onMessage, a.address, a.port);
  }

  /** True when the addon's batched (GSO/GRO) path is in use. */
  get batched(): boolean {
    return this.fd >= 0;
  }

  /** The socket's descriptor on the batched path (for the node agent's native pump); -1 otherwise. */
  get nativeFd(): number {
    return this.closed ? -1 : this.fd;
  }

  /** One read from the addon: `len` bytes of datagrams of `seg` bytes (the last may be shorter). */
  private readonly onRecv = (len: number, seg: number, from: number, port: number): void => {
    if (from !== this.lastFromInt) {
      this.lastFromInt = from;
      this.lastFrom = intToIpv4(from);
    }
    const buf = this.rbuf;
    const addr = this.lastFrom;
    if (seg < len && this.onRun !== undefined && this.onRun(buf, len, seg, addr, port)) return;
    for (let o = 0; o < len && !this.closed; o += seg) {
      const end = o + seg < len ? o + seg : len;
      this.onMessage(buf.subarray(o, end), addr, port);
    }
  };

  /**
   * Send one datagram made of `chunks` (copied: the caller may reuse them at once).
   * On the batched path it leaves at the end of this event-loop turn, in order.
   */
  send(chunks: Buffer | Buffer[], port: number, address: string): void {
    if (this.closed) return;
    if (this.socket) {
      this.socket.send(chunks, port, address);
      return;
    }
    let len = 0;
    if (Array.isArray(chunks)) for (let i = 0; i < chunks.length; i++) len += (chunks[i] as Buffer).length;
    else len = chunks.length;
    if (address !== this.lastToText) {
      this.lastToText = address;
      this.lastToInt = ipv4ToInt(address) ?? -1;
    }
    const to = this.lastToInt;
    this.stats.datagrams++;
    if (to < 0) {
      this.stats.dropped++; // not an IPv4 address: nothing to send to
      return;
    }
    if (len > MAX_SEGMENT || len === 0) {
      // too big to batch (it will be IP-fragmented): keep the order, send it alone
      this.flush();
      this.copyIn(chunks, 0);
      this.sendNow(len, 0, to, port);
      return;
    }
    if (
      this.pendCount > 0 &&
      (to !== this.pendAddr ||
        port !== this.pendPort ||
        this.pendClosed ||
        len > this.pendSeg ||
        this.pendCount >= MAX_SEGMENTS ||
        this.pendLen + len > BATCH_BYTES)
    )
      this.flush();
    this.copyIn(chunks, this.pendLen);
    if (this.pendCount === 0) {
      this.pendSeg = len;
      this.pendAddr = to;
      this.pendPort = port;
    } else if (len < this.pendSeg) {
      this.pendClosed = true; // a shorter datagram ends a GSO run
    }
    this.pendLen += len;
    this.pendCount++;
    if (!this.isDirty) {
      this.isDirty = true;
      dirty.push(this);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushAll);
      }
    }
  }

  private copyIn(chunks: Buffer | Buffer[], at: number): void {
    const b = this.sbuf;
    if (Array.isArray(chunks)) {
      for (let i = 0; i < chunks.length; i++) {
        const c = chunks[i] as Buffer;
        c.copy(b, at);
        at += c.length;
      }
    } else {
      chunks.copy(b, at);
    }
  }

  private sendNow(len: number, seg: number, to: number, port: number): void {
    const n = native().udpSend(this.fd, this.sbuf, 0, len, seg, to, port);
    this.stats.batches++;
    if (n < 0) this.stats.dropped++;
  }

  /** Send what is pending now (called at the end of the turn; callers rarely need it). */
  flush(): void {
    this.isDirty = false;
    if (this.pendCount === 0 || this.closed) return;
    this.sendNow(this.pendLen, this.pendCount > 1 ? this.pendSeg : 0, this.pendAddr, this.pendPort);
    this.pendLen = 0;
    this.pendCount = 0;
    this.pendClosed = false;
  }

  close(): Promise<void> {
    if (this.socket) {
      const s = this.socket;
      return new Promise((resolve) => s.close(() => resolve()));
    }
    if (!this.closed) {
      this.flush();
      this.closed = true;
      native().udpClose(this.fd);
    }
    return Promise.resolve();
  }
}

function tryNative(): ReturnType<typeof native> | undefined {
  try {
    const n = native();
    return typeof n.udpOpen === 'function' ? n : undefined;
  } catch {
    return undefined;
  }
}
