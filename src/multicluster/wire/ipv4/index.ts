// IPv4 (RFC 791) and UDP (RFC 768) headers with their checksums. Addresses are
// unsigned 32-bit integers. decode() returns views (options, payload) into the input.
import { need, outBuf, malformed, toBuffer } from '../../../base/bounds/index.js';

export const PROTO_ICMP = 1;
export const PROTO_TCP = 6;
export const PROTO_UDP = 17;

export interface Ipv4Header {
  tos: number;
  id: number;
  /** 3 flag bits (bit 1 = DF, bit 0 = MF) */
  flags: number;
  fragmentOffset: number;
  ttl: number;
  protocol: number;
  src: number;
  dst: number;
  options?: Uint8Array;
  payload: Uint8Array;
}

/** One's-complement sum of 16-bit words, folded (not inverted). */
export function onesSum(buf: Uint8Array, offset: number, length: number, initial = 0): number {
  let sum = initial;
  const end = offset + length - 1;
  let i = offset;
  for (; i < end; i += 2) sum += ((buf[i] as number) << 8) | (buf[i + 1] as number);
  if (i === end) sum += (buf[i] as number) << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

export function checksum(buf: Uint8Array, offset: number, length: number, initial = 0): number {
  return ~onesSum(buf, offset, length, initial) & 0xffff;
}

export function encodingLength(h: Ipv4Header): number {
  return 20 + (h.options?.length ?? 0) + h.payload.length;
}

export function encode(h: Ipv4Header, buf?: Buffer, offset = 0): Buffer {
  const optLen = h.options?.length ?? 0;
  if (optLen % 4 !== 0 || optLen > 40) throw malformed('IPv4 header', offset, 'options must be a multiple of 4 bytes, at most 40');
  const total = encodingLength(h);
  if (total > 0xffff) throw malformed('IPv4 header', offset, `total length ${total} above 65535`);
  const out = outBuf(buf, offset, total, 'IPv4 header');
  const ihl = 5 + optLen / 4;
  out[offset] = 0x40 | ihl;
  out[offset + 1] = h.tos & 0xff;
  out.writeUInt16BE(total, offset + 2);
  out.writeUInt16BE(h.id & 0xffff, offset + 4);
  out.writeUInt16BE(((h.flags & 7) << 13) | (h.fragmentOffset & 0x1fff), offset + 6);
  out[offset + 8] = h.ttl & 0xff;
  out[offset + 9] = h.protocol & 0xff;
  out.writeUInt16BE(0, offset + 10);
  out.writeUInt32BE(h.src >>> 0, offset + 12);
  out.writeUInt32BE(h.dst >>> 0, offset + 16);
  if (h.options) out.set(h.options, offset + 20);
  out.writeUInt16BE(checksum(out, offset, ihl * 4), offset + 10);
  out.set(h.payload, offset + ihl * 4);
  return out;
}

export function decode(input: Uint8Array, offset = 0): Ipv4Header {
  const buf = toBuffer(input);
  need(buf, offset, 20, 'IPv4 header');
  const vihl = buf[offset] as number;
  if (vihl >> 4 !== 4) throw malformed('IPv4 header', offset, `version ${vihl >> 4} is not 4`);
  const hlen = (vihl & 15) * 4;
  if (hlen < 20) throw malformed('IPv4 header', offset, `header length ${hlen} below 20`);
  const total = buf.readUInt16BE(offset + 2);
  if (total < hlen) throw malformed('IPv4 header', offset + 2, `total length ${total} below header length ${hlen}`);
  need(buf, offset, total, 'IPv4 packet');
  if (onesSum(buf, offset, hlen) !== 0xffff) throw malformed('IPv4 header', offset + 10, 'header checksum does not verify');
  const fo = buf.readUInt16BE(offset + 6);
  return {
    tos: buf[offset + 1] as number,
    id: buf.readUInt16BE(offset + 4),
    flags: fo >>> 13,
    fragmentOffset: fo & 0x1fff,
    ttl: buf[offset + 8] as number,
    protocol: buf[offset + 9] as number,
    src: buf.readUInt32BE(offset + 12),
    dst: buf.readUInt32BE(offset + 16),
    ...(hlen > 20 ? { options: buf.subarray(offset + 20, offset + hlen) } : {}),
    payload: buf.subarray(offset + hlen, offset + total),
  };
}

export const ipv4 = { encode, decode, encodingLength };

/** Fast path: the destination address of the IPv4 packet at `offset`, or -1 if it is not a plausible IPv4 packet. */
export function peekDestination(buf: Uint8Array, offset: number, length: number): number {
  if (length < 20 || (buf[offset] as number) >> 4 !== 4) return -1;
  return (
    (((buf[offset + 16] as number) << 24) | ((buf[offset + 17] as number) << 16) | ((buf[offset + 18] as number) << 8) | (buf[offset + 19] as number)) >>> 0
  );
}

export function peekSource(buf: Uint8Array, offset: number, length: number): number {
  if (length < 20 || (buf[offset] as number) >> 4 !== 4) return -1;
  return (
    (((buf[offset + 12] as number) << 24) | ((buf[offset + 13] as number) << 16) | ((buf[offset + 14] as number) << 8) | (buf[offset + 15] as number)) >>> 0
  );
}

// --- UDP ---------------------------------------------------------------------------

export interface UdpDatagram {
  srcPort: number;
  dstPort: number;
  /** the checksum as found on decode (0 = none); ignored on encode */
  checksum?: number;
  payload: Uint8Array;
}

function pseudoSum(src: number, dst: number, length: number): number {
  return (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + PROTO_UDP + length;
}

export const udp = {
  encodingLength(d: UdpDatagram): number {
    return 8 + d.payload.length;
  },
  /** With `ips` the checksum is computed over the pseudo-header; without it the checksum is 0 (allowed in IPv4). */
  encode(d: UdpDatagram, buf?: Buffer, offset = 0, ips?: { src: number; dst: number }): Buffer {
    const len = 8 + d.payload.length;
    if (len > 0xffff) throw malformed('UDP datagram', offset, `length ${len} above 65535`);
    const out = outBuf(buf, offset, len, 'UDP datagram');
    out.writeUInt16BE(d.srcPort & 0xffff, offset);
    out.writeUInt16BE(d.dstPort & 0xffff, offset + 2);
    out.writeUInt16BE(len, offset + 4);
    out.writeUInt16BE(0, offset + 6);
    out.set(d.payload, offset + 8);
    if (ips) {
      const c = checksum(out, offset, len, pseudoSum(ips.src, ips.dst, len));
      out.writeUInt16BE(c === 0 ? 0xffff : c, offset + 6);
    }
    return out;
  },
  /** With `ips` a non-zero checksum must verify. */
  decode(input: Uint8Array, offset = 0, ips?: { src: number; dst: number }): UdpDatagram {
    const buf = toBuffer(input);
    need(buf, offset, 8, 'UDP header');
    const len = buf.readUInt16BE(offset + 4);
    if (len < 8) throw malformed('UDP header', offset + 4, `length ${len} below 8`);
    need(buf, offset, len, 'UDP datagram');
    const sum = buf.readUInt16BE(offset + 6);
    if (ips && sum !== 0 && onesSum(buf, offset, len, pseudoSum(ips.src, ips.dst, len)) !== 0xffff) {
      throw malformed('UDP datagram', offset + 6, 'checksum does not verify');
    }
    return { srcPort: buf.readUInt16BE(offset), dstPort: buf.readUInt16BE(offset + 2), checksum: sum, payload: buf.subarray(offset + 8, offset + len) };
  },
};
