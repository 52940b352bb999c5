// The common git signature read without openpgp.js: one version 4 binary-document
// signature packet (what `git commit -S` / gpg makes) by an RSA, legacy EdDSA or Ed25519
// key, with the usual subpackets. Reading it through openpgp.js costs as much as the
// public-key check itself; strict history checks thousands. Anything else — another
// version or type, a partial length, a critical subpacket, a revocation key, bytes after
// the packet — is undefined, and the caller lets openpgp.js read it (and judge it). What is
// returned has what native-check.ts needs; a differential test keeps both readers equal.
import type { SigPacket } from './native-check.js';

export interface QuickSignature extends SigPacket {
  /** 16 hex digits, upper case; '' when the signature names no issuer */
  issuerKeyID: string;
  created: Date;
}

const SUPPORTED_KEY_ALGOS = new Set([1, 3, 22, 27]);
const SUPPORTED_HASHES = new Set([8, 9, 10, 11, 12, 14]);

/** Body of the single signature packet in `bin`, or undefined. */
function packetBody(bin: Uint8Array): Uint8Array | undefined {
  const tagByte = bin[0];
  if (tagByte === undefined || (tagByte & 0x80) === 0) return undefined;
  let len: number;
  let off: number;
  if (tagByte & 0x40) {
    if ((tagByte & 0x3f) !== 2) return undefined;
    const l0 = bin[1];
    if (l0 === undefined) return undefined;
    if (l0 < 192) {
      len = l0;
      off = 2;
    } else if (l0 < 224) {
      if (bin.length < 3) return undefined;
      len = ((l0 - 192) << 8) + bin[2]! + 192;
      off = 3;
    } else if (l0 === 255) {
      if (bin.length < 6) return undefined;
      len = ((bin[2]! << 24) >>> 0) + (bin[3]! << 16) + (bin[4]! << 8) + bin[5]!;
      off = 6;
    } else return undefined; // partial body lengths
  } else {
    if (((tagByte >> 2) & 0x0f) !== 2) return undefined;
    const lt = tagByte & 3;
    if (lt === 0) {
      if (bin.length < 2) return undefined;
      len = bin[1]!;
      off = 2;
    } else if (lt === 1) {
      if (bin.length < 3) return undefined;
      len = (bin[1]! << 8) + bin[2]!;
      off = 3;
    } else if (lt === 2) {
      if (bin.length < 5) return undefined;
      len = ((bin[1]! << 24) >>> 0) + (bin[2]! << 16) + (bin[3]! << 8) + bin[4]!;
      off = 5;
    } else return undefined;
  }
  if (off + len !== bin.length) return undefined;
  return bin.subarray(off, off + len);
}

interface Subpackets {
  created?: number;
  expiresIn?: number;
  issuer?: string;
  fingerprint?: string;
  ok: boolean;
}

function readSubpackets(area: Uint8Array, into: Subpackets, hashed: boolean): void {
  let p = 0;
  while (p < area.length) {
    const l0 = area[p]!;
    let len: number;
    if (l0 < 192) {
      len = l0;
      p += 1;
    } else if (l0 < 255) {
      if (p + 1 >= area.length) {
        into.ok = false;
        return;
      }
      len = ((l0 - 192) << 8) + area[p + 1]! + 192;
      p += 2;
    } else {
      if (p + 4 >= area.length) {
        into.ok = false;
        return;
      }
      len = ((area[p + 1]! << 24) >>> 0) + (area[p + 2]! << 16) + (area[p + 3]! << 8) + area[p + 4]!;
      p += 5;
    }
    if (len < 1 || p + len > area.length) {
      into.ok = false;
      return;
    }
    const critical = (area[p]! & 0x80) !== 0;
    const type = area[p]! & 0x7f;
    const body = area.subarray(p + 1, p + len);
    p += len;
    switch (type) {
      case 2:
        if (!hashed || body.length !== 4) {
          into.ok = false;
          return;
        }
        into.created = ((body[0]! << 24) >>> 0) + (body[1]! << 16) + (body[2]! << 8) + body[3]!;
        break;
      case 3:
        if (!hashed || body.length !== 4) {
          into.ok = false;
          return;
        }
        into.expiresIn = ((body[0]! << 24) >>> 0) + (body[1]! << 16) + (body[2]! << 8) + body[3]!;
        break;
      case 16:
        if (body.length !== 8) {
          into.ok = false;
          return;
        }
        into.issuer = Buffer.from(body).toString('hex').toUpperCase();
        break;
      case 33:
        if (body.length !== 21 || body[0] !== 4) {
          into.ok = false;
          return;
        }
        into.fingerprint = Buffer.from(body.subarray(1)).toString('hex').toUpperCase();
        break;
      case 12: // a revocation key: openpgp.js decides
        into.ok = false;
        return;
      default:
        if (critical) {
          into.ok = false;
          return;
        }
    }
  }
}

/** A v4 signature packet's MPI at `p`: [value, next offset], or undefined. */
function mpi(b: Uint8Array, p: number): [Uint8Array, number] | undefined {
  if (p + 2 > b.length) return undefined;
  const bytes = ((b[p]! << 8) + b[p + 1]! + 7) >> 3;
  if (p + 2 + bytes > b.length) return undefined;
  return [b.subarray(p + 2, p + 2 + bytes), p + 2 + bytes];
}

export function readQuickSignature(bin: Uint8Array): QuickSignature | undefined {
  const b = packetBody(bin);
  if (!b || b.length < 6 || b[0] !== 4) return undefined;
  const signatureType = b[1]!;
  const publicKeyAlgorithm = b[2]!;
  const hashAlgorithm = b[3]!;
  if (signatureType !== 0 || !SUPPORTED_KEY_ALGOS.has(publicKeyAlgorithm) || !SUPPORTED_HASHES.has(hashAlgorithm)) return undefined;
  const hashedLen = (b[4]! << 8) + b[5]!;
  if (6 + hashedLen + 2 > b.length) return undefined;
  const sub: Subpackets = { ok: true };
  readSubpackets(b.subarray(6, 6 + hashedLen), sub, true);
  let p = 6 + hashedLen;
  const unhashedLen = (b[p]! << 8) + b[p + 1]!;
  p += 2;
  if (p + unhashedLen + 2 > b.length) return undefined;
  readSubpackets(b.subarray(p, p + unhashedLen), sub, false);
  if (!sub.ok || sub.created === undefined) return undefined;
  p += unhashedLen;
  const signedHashValue = b.subarray(p, p + 2);
  p += 2;
  let params: Record<string, Uint8Array>;
  if (publicKeyAlgorithm === 27) {
    if (p + 64 !== b.length) return undefined;
    params = { RS: b.subarray(p, p + 64) };
  } else if (publicKeyAlgorithm === 22) {
    const r = mpi(b, p);
    const s = r && mpi(b, r[1]);
    if (!r || !s || s[1] !== b.length) return undefined;
    params = { r: r[0], s: s[0] };
  } else {
    const s = mpi(b, p);
    if (!s || s[1] !== b.length) return undefined;
    params = { s: s[0] };
  }
  let issuerKeyID = sub.issuer && !/^0+$/.test(sub.issuer) ? sub.issuer : '';
  if (!issuerKeyID && sub.fingerprint) issuerKeyID = sub.fingerprint.slice(-16);
  // the bytes the signature covers, after the document: the packet up to the unhashed area (and the v4 trailer)
  const signatureData = b.subarray(0, 6 + hashedLen);
  const expires = sub.expiresIn ? new Date((sub.created + sub.expiresIn) * 1000) : Infinity;
  return new Quick(
    signatureType,
    hashAlgorithm,
    publicKeyAlgorithm,
    signedHashValue,
    params,
    issuerKeyID,
    new Date(sub.created * 1000),
    signatureData,
    expires,
  );
}

/** What readQuickSignature returns: the fields, and the methods native-check.ts calls (on the prototype: no closures per signature). */
class Quick implements QuickSignature {
  readonly unknownSubpackets = [];
  readonly rawNotations = [];
  readonly revocationKeyClass = null;
  constructor(
    readonly signatureType: number,
    readonly hashAlgorithm: number,
    readonly publicKeyAlgorithm: number,
    readonly signedHashValue: Uint8Array,
    readonly params: Record<string, Uint8Array>,
    readonly issuerKeyID: string,
    readonly created: Date,
    private readonly signatureData: Uint8Array,
    private readonly expires: Date | number,
  ) {}

  /** The document, the signature packet up to its unhashed area, and the v4 trailer. */
  toHash(_type: number, data: unknown): Uint8Array {
    const trailer = Buffer.alloc(6);
    trailer[0] = 4;
    trailer[1] = 0xff;
    trailer.writeUInt32BE(this.signatureData.length, 2);
    return Buffer.concat([(data as { bytes: Uint8Array }).bytes, this.signatureData, trailer]);
  }

  getExpirationTime(): Date | number {
    return this.expires;
  }
}
