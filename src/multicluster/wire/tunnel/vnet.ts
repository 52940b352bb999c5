// virtio_net_hdr (the 10-byte header in front of every packet of a TUN device opened with
// IFF_VNET_HDR, see linux/virtio_net.h) and software segmentation of the TCP/IPv4
// super-packets it describes, for peers that only take plain packets (an old gateway,
// a kernel vxlan device). Codecs only: the caller owns the buffers.
import { onesSum } from '../ipv4/index.js';
import { malformed, need, toBuffer } from '../../../base/bounds/index.js';

export const VNET_HDR_LEN = 10;
export const VNET_F_NEEDS_CSUM = 1;
export const VNET_GSO_NONE = 0;
export const VNET_GSO_TCPV4 = 1;
export const VNET_GSO_ECN = 0x80;

export interface VnetHeader {
  flags: number;
  gsoType: number;
  hdrLen: number;
  gsoSize: number;
  csumStart: number;
  csumOffset: number;
}

/** The header's fields are little-endian (virtio 1.0 on a little-endian host: TUNSETVNETLE is the default there). */
export const vnetHeader = {
  encode(h: VnetHeader, buf: Buffer = Buffer.alloc(VNET_HDR_LEN), offset = 0): Buffer {
    need(buf, offset, VNET_HDR_LEN, 'virtio_net_hdr');
    buf[offset] = h.flags;
    buf[offset + 1] = h.gsoType;
    buf.writeUInt16LE(h.hdrLen, offset + 2);
    buf.writeUInt16LE(h.gsoSize, offset + 4);
    buf.writeUInt16LE(h.csumStart, offset + 6);
    buf.writeUInt16LE(h.csumOffset, offset + 8);
    return buf;
  },
  decode(input: Uint8Array, offset = 0): VnetHeader {
    const buf = toBuffer(input);
    need(buf, offset, VNET_HDR_LEN, 'virtio_net_hdr');
    return {
      flags: buf[offset] as number,
      gsoType: buf[offset + 1] as number,
      hdrLen: buf.readUInt16LE(offset + 2),
      gsoSize: buf.readUInt16LE(offset + 4),
      csumStart: buf.readUInt16LE(offset + 6),
      csumOffset: buf.readUInt16LE(offset + 8),
    };
  },
};

/** Receives each plain IPv4 packet made by segmentVnet(); `buf` is reused for the next one. */
export interface SegmentSink {
  segment(buf: Buffer, offset: number, length: number): void;
}

function fold(sum: number): number {
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/**
 * Turn the virtio_net_hdr + IPv4 packet in `src[off .. off+len)` into plain IPv4 packets
 * with complete checksums, written one at a time into `scratch` (at least 65536 bytes) and
 * handed to `sink`: a TCP super-packet (GSO_TCPV4) becomes gso_size segments the way a NIC
 * would cut them (IP ID + i, sequence numbers advanced, FIN/PSH only on the last, CWR only
 * on the first); a packet with NEEDS_CSUM gets its checksum completed. Returns the number
 * of packets, or a StraitError (malformed) for a header it cannot honour.
 */
export function segmentVnet(src: Buffer, off: number, len: number, scratch: Buffer, sink: SegmentSink): number {
  if (len < VNET_HDR_LEN + 20) throw malformed('virtio_net_hdr packet', off, `needs at least ${VNET_HDR_LEN + 20} bytes, got ${len}`);
  const flags = src[off] as number;
  const gso = (src[off + 1] as number) & ~VNET_GSO_ECN;
  const ip = off + VNET_HDR_LEN;
  const ipLen = len - VNET_HDR_LEN;
  if ((src[ip] as number) >> 4 !== 4) throw malformed('virtio_net_hdr packet', ip, 'not an IPv4 packet');
  const ihl = ((src[ip] as number) & 0x0f) * 4;
  if (ihl < 20 || ihl > ipLen) throw malformed('virtio_net_hdr packet', ip, `IPv4 header length ${ihl} does not fit`);
  if (gso === VNET_GSO_NONE) {
    src.copy(scratch, 0, ip, ip + ipLen);
    if ((flags & VNET_F_NEEDS_CSUM) !== 0) {
      const start = src.readUInt16LE(off + 6);
      const field = start + src.readUInt16LE(off + 8);
      if (start < ihl || field + 2 > ipLen)
        throw malformed('virtio_net_hdr packet', off + 6, `checksum at ${start}+${field - start} is outside the ${ipLen}-byte packet`);
      // the field holds the pseudo-header sum: the sum from csum_start to the end completes it
      let c = ~onesSum(scratch, start, ipLen - start) & 0xffff;
      if (c === 0 && scratch[9] === 17) c = 0xffff; // UDP: zero means "no checksum"
      scratch.writeUInt16BE(c, field);
    }
    sink.segment(scratch, 0, ipLen);
    return 1;
  }
  if (gso !== VNET_GSO_TCPV4 || src[ip + 9] !== 6) throw malformed('virtio_net_hdr packet', off + 1, `GSO type ${src[off + 1]} is not TCP over IPv4`);
  const mss = src.readUInt16LE(off + 4);
  const tcp = ihl;
  if (tcp + 20 > ipLen) throw malformed('virtio_net_hdr packet', ip + tcp, 'TCP header does not fit');
  const thl = ((src[ip + tcp + 12] as number) >> 4) * 4;
  const hdr = tcp + thl;
  if (thl < 20 || hdr > ipLen || mss === 0) throw malformed('virtio_net_hdr packet', ip + tcp, `TCP header length ${thl} or segment size ${mss} is not usable`);
  const payload = ipLen - hdr;
  const n = payload === 0 ? 1 : Math.ceil(payload / mss);
  const id0 = src.readUInt16BE(ip + 4);
  const seq0 = src.readUInt32BE(ip + tcp + 4);
  const tcpFlags = src[ip + tcp + 13] as number;
  // pseudo-header words that do not change: source, destination, protocol
  const pseudo = onesSum(src, ip + 12, 8, 6);
  src.copy(scratch, 0, ip, ip + hdr);
  for (let i = 0; i < n; i++) {
    const dOff = i * mss;
    const dLen = payload - dOff < mss ? payload - dOff : mss;
    const total = hdr + dLen;
    if (i > 0) src.copy(scratch, 0, ip, ip + hdr);
    src.copy(scratch, hdr, ip + hdr + dOff, ip + hdr + dOff + dLen);
    scratch.writeUInt16BE(total, 2);
    scratch.writeUInt16BE((id0 + i) & 0xffff, 4);
    scratch.writeUInt16BE(0, 10);
    scratch.writeUInt16BE(~onesSum(scratch, 0, ihl) & 0xffff, 10);
    scratch.writeUInt32BE((seq0 + dOff) >>> 0, tcp + 4);
    let f = tcpFlags;
    if (i < n - 1) f &= ~0x09; // FIN, PSH only on the last segment
    if (i > 0) f &= ~0x80; // CWR only on the first
    scratch[tcp + 13] = f;
    scratch.writeUInt16BE(0, tcp + 16);
    const sum = fold(onesSum(scratch, tcp, thl + dLen) + pseudo + (thl + dLen));
    scratch.writeUInt16BE(~sum & 0xffff, tcp + 16);
    sink.segment(scratch, 0, total);
  }
  return n;
}
