// A TUN device (IFF_TUN | IFF_NO_PI) through strait's C addon. Packets are read on
// Node's event loop into one shared buffer and handed to `onPacket(buf, length)`,
// which must consume them before returning (zero-copy, no per-packet allocation).
// The packet starts at `headroom`, so encapsulation headers can be written in front.
import { execFileSync } from 'node:child_process';
import { E } from '../../../base/errors/index.js';
import { native } from '../../../platform/native/index.js';

/** A packet read from the device: `buf[offset .. offset + length)`; consume it before returning. */
export type PacketHandler = (buf: Buffer, offset: number, length: number) => void;

/** Size of the virtio_net_hdr in front of every packet of an offload device. */
export const VNET_HDR_LEN = 10;
const ZERO_VNET_HDR = Buffer.alloc(VNET_HDR_LEN);
/**
 * The device's gso_max_size on offload: the kernel default. Forwarded super-packets (pod
 * traffic on an agent's node) are up to the pod interface's gso_max_size, 65536 by
 * default, and since Linux 6.x (gso_features_check) a GSO packet at least as long as the
 * device's gso_max_size is segmented in software before the device: with 62000 here the
 * agent saw 2.3 KB packets on average while 37 KB ones arrived from the pod, so offload
 * did nothing pod->pod. TCP sizes its super-packets to gso_max_size minus ~320 bytes
 * (MAX_TCP_HEADER), so they still fit one UDP datagram with the VXLAN or tunnel overhead
 * (32 bytes); a rare bigger one (GRO on a forwarding path) fails to send and is counted.
 */
export const GSO_MAX_SIZE = 65536;

/** True when the virtio_net_hdr at `off` asks for nothing (no GSO, no checksum to complete). */
export function vnetHdrIsPlain(buf: Buffer, off: number): boolean {
  return buf[off] === 0 && buf[off + 1] === 0;
}

/** Packets the kernel may queue in the device for the reader (default txqueuelen is 500). */
export const TX_QUEUE_LEN = 2000;

export class TunDevice {
  private open = true;
  private constructor(
    readonly fd: number,
    readonly name: string,
    readonly readBuffer: Buffer,
    readonly offload: boolean,
  ) {}

  /** Create (or attach to) TUN device `name`. `headroom` bytes stay free before each packet in the read buffer. */
  /**
   * With `offload`, the kernel hands over TCP super-packets (TSO, up to GSO_MAX_SIZE) with
   * a 10-byte virtio_net_hdr in front, and accepts the same on write: one read, one
   * seal, one write per up to ~62 KB instead of per 1400 bytes.
   */
  static open(name: string, onPacket: PacketHandler, opts: { headroom?: number; mtu?: number; offload?: boolean; txQueueLen?: number } = {}): TunDevice {
    let fd: number;
    let actual: string;
    try {
      [fd, actual] = native().tunOpen(name, opts.offload === true);
    } catch (err) {
      throw E.tunnelDevice(name, err instanceof Error ? err.message : String(err));
    }
    const headroom = opts.headroom ?? 0;
    // a super-packet of up to 65535 bytes and its virtio_net_hdr
    const whole = Buffer.alloc(headroom + 65536 + VNET_HDR_LEN);
    const view = whole.subarray(headroom);
    const dev = new TunDevice(fd, actual, whole, opts.offload === true);
    native().tunStart(fd, view, (len: number) => onPacket(whole, headroom, len));
    if (opts.mtu) ip('link', 'set', 'dev', actual, 'mtu', String(opts.mtu));
    // the kernel queues packets routed into the device until we read them; the default 500
    // overflows while the single-threaded reader seals a burst, and every drop halves a TCP window
    ip('link', 'set', 'dev', actual, 'txqueuelen', String(opts.txQueueLen ?? TX_QUEUE_LEN));
    if (opts.offload) ip('link', 'set', 'dev', actual, 'gso_max_size', String(GSO_MAX_SIZE));
    return dev;
  }

  /** Write exactly these bytes (on an offload device they must start with a virtio_net_hdr). */
  write(buf: Buffer, offset: number, length: number): boolean {
    if (!this.open) return false;
    return native().tunWrite(this.fd, buf, offset, length) >= 0;
  }

  /** Write one plain IPv4 packet (a zero virtio_net_hdr goes first on an offload device). False when dropped. */
  writePacket(buf: Buffer, offset: number, length: number): boolean {
    if (!this.open) return false;
    if (!this.offload) return native().tunWrite(this.fd, buf, offset, length) >= 0;
    return native().tunWritev(this.fd, ZERO_VNET_HDR, buf, offset, length) >= 0;
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    native().tunClose(this.fd);
  }
}

/** Run `ip` (iproute2) in the current network namespace. */
export function ip(...args: string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { status?: number; stderr?: string };
    throw E.systemTool(`ip ${args.join(' ')}`, e.status ?? 'signal', e.stderr ?? String(err));
  }
}

/**
 * Bring `dev` up and route each CIDR into it. Idempotent (uses `ip route replace`). The device
 * gets no IPv6 link-local address: the tunnel carries IPv4, and the kernel's own IPv6 packets on
 * a new link (router solicitations, MLD reports) were read back from the device and counted as
 * malformed or unroutable drops at every start (seen in real clusters).
 */
export function routeInto(dev: string, cidrs: readonly string[], opts: { mtu?: number; src?: string } = {}): void {
  // before `up` (no address is made then); a kernel without IPv6 refuses it: nothing to stop
  try {
    ip('link', 'set', 'dev', dev, 'addrgenmode', 'none');
  } catch {
    /* no IPv6 */
  }
  ip('link', 'set', 'dev', dev, 'up', ...(opts.mtu ? ['mtu', String(opts.mtu)] : []));
  for (const c of cidrs) ip('route', 'replace', c, 'dev', dev, ...(opts.src ? ['src', opts.src] : []));
}
