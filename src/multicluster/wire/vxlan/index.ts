// VXLAN (RFC 7348): 8-byte header (flags with the I bit, 24-bit VNI) followed by an
// inner Ethernet II frame. decode() returns views into the input, never copies.
import { need, outBuf, malformed, toBuffer } from '../../../base/bounds/index.js';

export const VXLAN_PORT = 4800;
export const VXLAN_HEADER = 8;
export const ETH_HEADER = 14;
/** Bytes before the inner IP packet: VXLAN header + Ethernet header. */
export const VXLAN_OVERHEAD = VXLAN_HEADER + ETH_HEADER;
export const ETHERTYPE_IPV4 = 0x0800;
export const ETHERTYPE_ARP = 0x0806;
/**
 * IEEE 802 local experimental EtherType 1: strait's agent<->gateway frames that carry a
 * 10-byte virtio_net_hdr and a TCP super-packet (TUN offload). Kernel vxlan peers ignore them.
 */
export const ETHERTYPE_VNET = 0x88b5;

export interface VxlanFrame {
  vni: number;
  /** inner destination MAC (6 bytes) */
  dst: Uint8Array;
  /** inner source MAC (6 bytes) */
  src: Uint8Array;
  etherType: number;
  payload: Uint8Array;
}

export function encodingLength(f: VxlanFrame): number {
  return VXLAN_OVERHEAD + f.payload.length;
}

/** Write only the two headers (for the hot path: the payload is already in place after them). */
export function writeHeaders(buf: Buffer, offset: number, vni: number, dst: Uint8Array, src: Uint8Array, etherType: number): void {
  buf[offset] = 0x08;
  buf[offset + 1] = 0;
  buf[offset + 2] = 0;
  buf[offset + 3] = 0;
  buf.writeUIntBE(vni & 0xffffff, offset + 4, 3);
  buf[offset + 7] = 0;
  buf.set(dst, offset + 8);
  buf.set(src, offset + 14);
  buf.writeUInt16BE(etherType, offset + 20);
}

export function encode(f: VxlanFrame, buf?: Buffer, offset = 0): Buffer {
  if (!Number.isInteger(f.vni) || f.vni < 0 || f.vni > 0xffffff) throw malformed('VXLAN frame', offset, `VNI ${f.vni} is not in 0..16777215`);
  if (f.dst.length !== 6 || f.src.length !== 6) throw malformed('VXLAN frame', offset, 'MAC addresses must be 6 bytes');
  const out = outBuf(buf, offset, encodingLength(f), 'VXLAN frame');
  writeHeaders(out, offset, f.vni, f.dst, f.src, f.etherType);
  out.set(f.payload, offset + VXLAN_OVERHEAD);
  return out;
}

export function decode(input: Uint8Array, offset = 0): VxlanFrame {
  const buf = toBuffer(input);
  need(buf, offset, VXLAN_OVERHEAD, 'VXLAN frame');
  if (((buf[offset] as number) & 0x08) === 0) throw malformed('VXLAN frame', offset, 'I flag (0x08) not set');
  return {
    vni: buf.readUIntBE(offset + 4, 3),
    dst: buf.subarray(offset + 8, offset + 14),
    src: buf.subarray(offset + 14, offset + 20),
    etherType: buf.readUInt16BE(offset + 20),
    payload: buf.subarray(offset + VXLAN_OVERHEAD),
  };
}

export const vxlan = { encode, decode, encodingLength };

export function macToString(m: Uint8Array): string {
  return Array.from(m, (b) => b.toString(16).padStart(2, '0')).join(':');
}

export function macFromString(s: string): Buffer {
  const parts = s.split(':');
  if (parts.length !== 6 || parts.some((p) => !/^[0-9a-fA-F]{2}$/.test(p))) throw malformed('MAC address', 0, `${JSON.stringify(s)} is not aa:bb:cc:dd:ee:ff`);
  return Buffer.from(parts.map((p) => parseInt(p, 16)));
}

/** Inner Ethernet addresses strait uses (locally administered); a kernel vxlan peer must use the same. */
export const GATEWAY_MAC = Buffer.from([0x02, 0x53, 0x54, 0x00, 0x00, 0x01]);
export const AGENT_MAC = Buffer.from([0x02, 0x53, 0x54, 0x00, 0x00, 0x02]);

/**
 * IEEE 802 local experimental EtherType 1: "I am the cluster's active gateway" (HA). A
 * gateway that takes the lease sends it to every node agent of its cluster; an agent
 * accepts it only from one of its configured gateway addresses and only with an epoch
 * (the lease's transition count) not older than the last one it followed.
 * Payload: magic "SGWA" (4 bytes), epoch (uint32 BE).
 */
export const ETHERTYPE_ANNOUNCE = 0x88b5;
export const ANNOUNCE_MAGIC = 0x53475741;
export const ANNOUNCE_PAYLOAD = 8;

/** A whole VXLAN frame carrying a gateway announcement. */
export function encodeAnnounce(vni: number, epoch: number): Buffer {
  const out = Buffer.alloc(VXLAN_OVERHEAD + ANNOUNCE_PAYLOAD);
  writeHeaders(out, 0, vni, AGENT_MAC, GATEWAY_MAC, ETHERTYPE_ANNOUNCE);
  out.writeUInt32BE(ANNOUNCE_MAGIC, VXLAN_OVERHEAD);
  out.writeUInt32BE(epoch >>> 0, VXLAN_OVERHEAD + 4);
  return out;
}

/** The epoch of an announcement frame (VXLAN header checked by the caller), or -1 when it is not one. */
export function announceEpoch(msg: Uint8Array, len = msg.length): number {
  if (len < VXLAN_OVERHEAD + ANNOUNCE_PAYLOAD) return -1;
  const b = toBuffer(msg);
  if (b.readUInt16BE(20) !== ETHERTYPE_ANNOUNCE || b.readUInt32BE(VXLAN_OVERHEAD) !== ANNOUNCE_MAGIC) return -1;
  return b.readUInt32BE(VXLAN_OVERHEAD + 4);
}

// --- strait extension frames (agent <-> strait gateway only) --------------------------

/**
 * IEEE 802 local experimental EtherType 2: strait extension frames between a node agent
 * and a strait gateway, after a 12-byte extension header:
 *   0 kind (1 hello, 2 hello-ack, 3 fragment) | 1 index | 2 count | 3 features (hello) or 0
 *   4 message id (u32) | 8 fragment size (u16) | 10 reserved (u16, zero)
 * A fragment carries part of a virtio_net_hdr + IPv4 super-packet (the payload of an
 * ETHERTYPE_VNET frame); every fragment but the last carries `size` bytes. An agent sends
 * fragments only after its gateway answered a hello with FEATURE_FRAGMENTS, so a kernel
 * vxlan gateway (which drops unknown EtherTypes) keeps receiving plain IPv4 frames.
 */
export const ETHERTYPE_STRAIT = 0x88b6;
export const EXT_HEADER = 12;
export const EXT_HELLO = 1;
export const EXT_HELLO_ACK = 2;
export const EXT_FRAGMENT = 3;
/** hello feature bit: accepts EXT_FRAGMENT frames */
export const EXT_FEATURE_FRAGMENTS = 1;
export const EXT_MAX_FRAGMENTS = 64;
export const EXT_MIN_FRAGMENT = 64;
/** largest reassembled payload: virtio_net_hdr + 64 KiB packet, rounded up */
export const EXT_MAX_BODY = 65536 + 64;

export interface ExtFrame {
  kind: number;
  index: number;
  count: number;
  features: number;
  id: number;
  size: number;
  data: Uint8Array;
}

export function writeExtHeader(buf: Buffer, offset: number, kind: number, index: number, count: number, features: number, id: number, size: number): void {
  buf[offset] = kind;
  buf[offset + 1] = index;
  buf[offset + 2] = count;
  buf[offset + 3] = features;
  buf.writeUInt32BE(id >>> 0, offset + 4);
  buf.writeUInt16BE(size, offset + 8);
  buf[offset + 10] = 0;
  buf[offset + 11] = 0;
}

/** Check the extension header of `len` bytes at `offset` (hot path, no allocation): '' when valid, else the broken rule. */
export function extRule(buf: Buffer, offset: number, len: number): string {
  if (len < EXT_HEADER) return `needs at least ${EXT_HEADER} bytes, got ${len}`;
  if (buf[offset + 10] !== 0 || buf[offset + 11] !== 0) return 'reserved bytes must be zero';
  const kind = buf[offset] as number;
  const index = buf[offset + 1] as number;
  const count = buf[offset + 2] as number;
  const size = buf.readUInt16BE(offset + 8);
  if (kind === EXT_HELLO || kind === EXT_HELLO_ACK) {
    if (index !== 0 || count !== 0 || size !== 0 || len !== EXT_HEADER) return 'a hello carries no index, count, size or data';
    return '';
  }
  if (kind !== EXT_FRAGMENT) return `kind ${kind} is unknown`;
  if (buf[offset + 3] !== 0) return 'features must be zero in a fragment';
  if (count < 2 || count > EXT_MAX_FRAGMENTS) return `fragment count ${count} is not in 2..${EXT_MAX_FRAGMENTS}`;
  if (index >= count) return `fragment index ${index} is not below the count ${count}`;
  if (size < EXT_MIN_FRAGMENT) return `fragment size ${size} is below ${EXT_MIN_FRAGMENT}`;
  if ((count - 1) * size >= EXT_MAX_BODY) return `${count} fragments of ${size} bytes exceed ${EXT_MAX_BODY} bytes`;
  const data = len - EXT_HEADER;
  if (index < count - 1 ? data !== size : data < 1 || data > size)
    return `fragment ${index} of ${count} carries ${data} bytes, expected ${index < count - 1 ? size : `1..${size}`}`;
  return '';
}

export const ext = {
  encodingLength(f: ExtFrame): number {
    return EXT_HEADER + f.data.length;
  },
  encode(f: ExtFrame, buf?: Buffer, offset = 0): Buffer {
    const out = outBuf(buf, offset, ext.encodingLength(f), 'VXLAN extension frame');
    writeExtHeader(out, offset, f.kind & 0xff, f.index & 0xff, f.count & 0xff, f.features & 0xff, f.id, f.size & 0xffff);
    out.set(f.data, offset + EXT_HEADER);
    const rule = extRule(out, offset, ext.encodingLength(f));
    if (rule !== '') throw malformed('VXLAN extension frame', offset, rule);
    return out;
  },
  /** The whole rest of the input is the extension frame. */
  decode(input: Uint8Array, offset = 0): ExtFrame {
    const buf = toBuffer(input);
    need(buf, offset, EXT_HEADER, 'VXLAN extension frame');
    const rule = extRule(buf, offset, buf.length - offset);
    if (rule !== '') throw malformed('VXLAN extension frame', offset, rule);
    return {
      kind: buf[offset] as number,
      index: buf[offset + 1] as number,
      count: buf[offset + 2] as number,
      features: buf[offset + 3] as number,
      id: buf.readUInt32BE(offset + 4),
      size: buf.readUInt16BE(offset + 8),
      data: buf.subarray(offset + EXT_HEADER),
    };
  },
};
