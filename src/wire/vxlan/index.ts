// VXLAN (RFC 7348): 8-byte header (flags with the I bit, 24-bit VNI) followed by an
// inner Ethernet II frame. decode() returns views into the input, never copies.
import { need, outBuf, malformed, toBuffer } from '../bounds/index.js';

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
 * IEEE 802 local experimental EtherType 2: "I am the cluster's active gateway" (HA). A
 * gateway that takes the lease sends it to every node agent of its cluster; an agent
 * accepts it only from one of its configured gateway addresses and only with an epoch
 * (the lease's transition count) not older than the last one it followed.
 * Payload: magic "SGWA" (4 bytes), epoch (uint32 BE).
 */
export const ETHERTYPE_ANNOUNCE = 0x88b6;
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
