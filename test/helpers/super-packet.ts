// A TCP super-packet as a TUN device with offload hands it over (virtio_net_hdr first), for
// the tests of software segmentation and of the gateway's send path.
import { vnetHeader, VNET_F_NEEDS_CSUM, VNET_GSO_TCPV4 } from '../../src/multicluster/wire/tunnel/index.js';

/** virtio_net_hdr + IPv4 + TCP (12 bytes of options) + payload, as the kernel hands it over */
export function superPacket(payloadLen: number, mss: number, tcpFlags: number, ecn = false): { pkt: Buffer; payload: Buffer } {
  const payload = Buffer.alloc(payloadLen);
  for (let i = 0; i < payloadLen; i++) payload[i] = (i * 7) & 0xff;
  const ip = Buffer.alloc(20 + 32);
  ip[0] = 0x45;
  ip.writeUInt16BE(Math.min(0xffff, 52 + payloadLen), 2);
  ip.writeUInt16BE(0xfff0, 4); // wraps after 16 segments
  ip.writeUInt16BE(0x4000, 6);
  ip[8] = 64;
  ip[9] = 6;
  Buffer.from([10, 1, 1, 10, 10, 2, 1, 10]).copy(ip, 12);
  ip.writeUInt16BE(40000, 20);
  ip.writeUInt16BE(5201, 22);
  ip.writeUInt32BE(0xfffff000, 24); // sequence numbers wrap too
  ip.writeUInt32BE(12345, 28);
  ip[32] = 8 << 4;
  ip[33] = tcpFlags;
  ip.writeUInt16BE(502, 34);
  Buffer.from([1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]).copy(ip, 40);
  const hdr = vnetHeader.encode({
    flags: VNET_F_NEEDS_CSUM,
    gsoType: VNET_GSO_TCPV4 | (ecn ? 0x80 : 0),
    hdrLen: 52,
    gsoSize: mss,
    csumStart: 20,
    csumOffset: 16,
  });
  return { pkt: Buffer.concat([hdr, ip, payload]), payload };
}
