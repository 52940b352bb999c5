// The cryptographic check of one OpenPGP document signature with node:crypto (OpenSSL)
// for RSA and Ed25519 (legacy EdDSA and RFC 9580 Ed25519): openpgp.js parses the
// packets and builds the hashed bytes; OpenSSL does the public-key operation, which is
// where openpgp.js spends most of its time. Other algorithms return 'unsupported' and
// the caller uses openpgp.js for them. A differential test keeps both paths equal.
import { constants, createHash, createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';

export interface SigPacket {
  signatureType: number;
  hashAlgorithm: number;
  publicKeyAlgorithm: number;
  signedHashValue: Uint8Array;
  params: unknown;
  unknownSubpackets?: { type: number; critical: boolean }[];
  rawNotations?: { name: string; critical: boolean }[];
  revocationKeyClass?: number | null;
  toHash(signatureType: number, data: unknown, detached?: boolean): Uint8Array;
  getExpirationTime(): Date | number;
}

interface KeyPacketLike {
  algorithm: number;
  publicParams: Record<string, unknown>;
}

const HASH: Record<number, string> = { 8: 'sha256', 9: 'sha384', 10: 'sha512', 11: 'sha224', 12: 'sha3-256', 14: 'sha3-512' };
const INSECURE: Record<number, string> = { 1: 'MD5', 2: 'SHA1', 3: 'RIPEMD160' };
const keyCache = new WeakMap<object, { key: KeyObject; kind: 'rsa' | 'ed25519'; size: number } | null>();

const b64u = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('base64url');
const leftPad = (b: Uint8Array, n: number): Buffer => {
  if (b.length >= n) return Buffer.from(b.buffer, b.byteOffset, b.length);
  const out = Buffer.alloc(n);
  out.set(b, n - b.length);
  return out;
};

function keyOf(packet: KeyPacketLike): { key: KeyObject; kind: 'rsa' | 'ed25519'; size: number } | null {
  const hit = keyCache.get(packet);
  if (hit !== undefined) return hit;
  let made: { key: KeyObject; kind: 'rsa' | 'ed25519'; size: number } | null = null;
  try {
    const p = packet.publicParams;
    if ((packet.algorithm === 1 || packet.algorithm === 3) && p['n'] instanceof Uint8Array && p['e'] instanceof Uint8Array) {
      made = { key: createPublicKey({ key: { kty: 'RSA', n: b64u(p['n']), e: b64u(p['e']) }, format: 'jwk' }), kind: 'rsa', size: p['n'].length };
    } else if (packet.algorithm === 22 && p['Q'] instanceof Uint8Array && p['Q'].length === 33 && p['Q'][0] === 0x40
      && String((p['oid'] as { getName?: () => string } | undefined)?.getName?.() ?? '').startsWith('ed25519')) {
      made = { key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64u(p['Q'].subarray(1)) }, format: 'jwk' }), kind: 'ed25519', size: 32 };
    } else if (packet.algorithm === 27 && p['A'] instanceof Uint8Array && p['A'].length === 32) {
      made = { key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64u(p['A']) }, format: 'jwk' }), kind: 'ed25519', size: 32 };
    }
  } catch {
    made = null;
  }
  keyCache.set(packet, made);
  return made;
}

/** OpenSSL's check, on this thread, or on libuv's thread pool (many checks at once use every core). */
function publicKeyCheck(pooled: boolean, algo: string | null, data: Uint8Array, key: Parameters<typeof cryptoVerify>[2], signature: Uint8Array): boolean | Promise<boolean> {
  if (!pooled) return cryptoVerify(algo, data, key, signature);
  return new Promise((resolve, reject) => cryptoVerify(algo, data, key, signature, (err, ok) => (err ? reject(err) : resolve(ok))));
}

/**
 * Check `sig` over `literal` with `keyPacket`. Resolves 'ok', or 'unsupported' when the
 * algorithm is not handled here; throws an Error saying why the signature is bad.
 * `pooled`: the public-key operation runs on libuv's thread pool (callers that check many
 * signatures concurrently: strict history).
 */
export async function nativeCheck(sig: SigPacket, keyPacket: KeyPacketLike, literal: unknown, date: Date, pooled = false): Promise<'ok' | 'unsupported'> {
  const hashName = HASH[sig.hashAlgorithm];
  const k = keyOf(keyPacket);
  if (!hashName || !k) {
    if (INSECURE[sig.hashAlgorithm]) throw new Error(`Insecure message hash algorithm: ${INSECURE[sig.hashAlgorithm]}`);
    return 'unsupported';
  }
  if (sig.publicKeyAlgorithm !== keyPacket.algorithm) throw new Error('Public key algorithm used to sign signature does not match issuer key algorithm.');
  const toHash = sig.toHash(sig.signatureType, literal, true);
  const digest = createHash(hashName).update(toHash).digest();
  if (digest[0] !== sig.signedHashValue[0] || digest[1] !== sig.signedHashValue[1]) throw new Error('Signed digest did not match');
  const params = (await sig.params) as Record<string, Uint8Array | undefined>;
  let ok: boolean;
  if (k.kind === 'rsa') {
    const s = params['s'];
    if (!(s instanceof Uint8Array)) throw new Error('malformed RSA signature');
    ok = await publicKeyCheck(pooled, hashName, toHash, { key: k.key, padding: constants.RSA_PKCS1_PADDING }, leftPad(s, k.size));
  } else {
    const rs = params['RS'] instanceof Uint8Array ? Buffer.from(params['RS'])
      : params['r'] instanceof Uint8Array && params['s'] instanceof Uint8Array ? Buffer.concat([leftPad(params['r'], 32), leftPad(params['s'], 32)]) : undefined;
    if (!rs || rs.length !== 64) throw new Error('malformed Ed25519 signature');
    ok = await publicKeyCheck(pooled, null, digest, k.key, rs);
  }
  if (!ok) throw new Error('Signature verification failed');
  const expires = sig.getExpirationTime();
  if (date.getTime() >= (expires instanceof Date ? expires.getTime() : expires)) throw new Error('Signature is expired');
  for (const u of sig.unknownSubpackets ?? []) if (u.critical) throw new Error(`Unknown critical signature subpacket type ${u.type}`);
  for (const n of sig.rawNotations ?? []) if (n.critical) throw new Error(`Unknown critical notation: ${n.name}`);
  if (sig.revocationKeyClass !== null && sig.revocationKeyClass !== undefined) throw new Error('signature names a revocation key class');
  return 'ok';
}
