// Bounds checks shared by every codec: a read past the end is a StraitError
// (STRAIT_ERR_TUNNEL_MALFORMED), never a RangeError.
import { E } from '../errors/index.js';

/** Throw unless `buf` holds `n` bytes from `offset`. */
export function need(buf: Uint8Array, offset: number, n: number, what: string): void {
  if (!Number.isInteger(offset) || offset < 0 || offset + n > buf.length) {
    throw E.tunnelMalformed(what, offset, `needs ${n} bytes, ${Math.max(0, buf.length - offset)} available`);
  }
}

export function malformed(what: string, offset: number, rule: string): Error {
  return E.tunnelMalformed(what, offset, rule);
}

/** Allocate or check the output buffer for an encoder. */
export function outBuf(buf: Buffer | undefined, offset: number, n: number, what: string): Buffer {
  if (!buf) return Buffer.alloc(offset + n);
  if (offset < 0 || offset + n > buf.length) throw E.tunnelMalformed(what, offset, `output buffer too small: needs ${n} bytes`);
  return buf;
}

/** Read an unsigned 64-bit big-endian integer that must fit in 2^53. */
export function readU64(buf: Buffer, offset: number, what: string): number {
  const hi = buf.readUInt32BE(offset);
  if (hi >= 0x200000) throw E.tunnelMalformed(what, offset, 'sequence/timestamp above 2^53');
  return hi * 0x100000000 + buf.readUInt32BE(offset + 4);
}

export function writeU64(buf: Buffer, value: number, offset: number): void {
  buf.writeUInt32BE(Math.floor(value / 0x100000000) >>> 0, offset);
  buf.writeUInt32BE(value >>> 0, offset + 4);
}

export function toBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}
