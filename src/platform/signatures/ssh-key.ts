// SSH public keys in their wire form (RFC 4253 §6.6, RFC 5656, RFC 8709, OpenSSH's
// PROTOCOL.certkeys), turned into node:crypto KeyObjects through JWK, and SSH
// signature blobs (RFC 4253 "string alg, string sig") checked with node:crypto.
// Supported: ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa (1024 bits or more;
// signatures rsa-sha2-256/512 only, never SHA-1) and their -cert-v01@openssh.com
// certificates. Security-key (sk-*) and DSA keys are refused by name.
// Every read is bounds-checked; bad input throws a StraitError from `fail`, never a
// RangeError.
import { constants, createHash, createPublicKey, verify as cryptoVerify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { E, type StraitError } from '../../base/errors/index.js';

type Fail = (why: string) => StraitError;

/** A bounds-checked reader of SSH wire data; reads return views into the buffer. */
export class SshReader {
  pos = 0;

  constructor(
    readonly buf: Buffer,
    private readonly fail: Fail,
    private readonly what: string,
  ) {}

  private need(n: number, field: string): void {
    if (n > this.buf.length - this.pos)
      throw this.fail(`${this.what} is truncated: ${field} needs ${n} bytes at offset ${this.pos}, ${this.buf.length - this.pos} left`);
  }

  u32(field: string): number {
    this.need(4, field);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  u64(field: string): bigint {
    this.need(8, field);
    const v = this.buf.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  u8(field: string): number {
    this.need(1, field);
    return this.buf[this.pos++] as number;
  }

  bytes(n: number, field: string): Buffer {
    this.need(n, field);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  string(field: string): Buffer {
    return this.bytes(this.u32(field), field);
  }

  /** a string field holding text (SSH names are ASCII) */
  text(field: string): string {
    return this.string(field).toString('latin1');
  }

  /** an mpint as unsigned big-endian bytes without leading zeros; negative values are refused */
  mpint(field: string): Buffer {
    const b = this.string(field);
    if (b.length > 0 && ((b[0] as number) & 0x80) !== 0) throw this.fail(`${this.what}: ${field} is negative`);
    let i = 0;
    while (i < b.length && b[i] === 0) i++;
    return b.subarray(i);
  }

  end(): void {
    if (this.pos !== this.buf.length) throw this.fail(`${this.what} has ${this.buf.length - this.pos} trailing bytes`);
  }
}

/** Write SSH strings (length-prefixed) one after the other. */
export function sshStrings(...parts: (Buffer | string)[]): Buffer {
  const bufs: Buffer[] = [];
  for (const p of parts) {
    const b = typeof p === 'string' ? Buffer.from(p, 'latin1') : p;
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    bufs.push(len, b);
  }
  return Buffer.concat(bufs);
}

export interface SshCertificate {
  /** 1 = user, 2 = host */
  certType: number;
  keyId: string;
  principals: string[];
  /** seconds since the epoch; validBefore 2^64-1 = forever */
  validAfter: bigint;
  validBefore: bigint;
  criticalOptions: string[];
  /** the CA's key */
  signatureKey: SshPublicKey;
  /** the bytes the CA signed and its signature blob */
  signed: Buffer;
  signature: Buffer;
}

export interface SshPublicKey {
  /** wire type name, e.g. "ssh-ed25519" or "ssh-ed25519-cert-v01@openssh.com" */
  type: string;
  /** the wire blob as given */
  blob: Buffer;
  /** "SHA256:<base64>" of the plain key (a certificate's fingerprint is its key's, as ssh-keygen prints it) */
  fingerprint: string;
  /** ED25519, ECDSA, RSA (as ssh-keygen -l prints it) */
  algorithm: 'ED25519' | 'ECDSA' | 'RSA';
  bits: number;
  /** the plain key's KeyObject (made on first use; throws the parser's StraitError when OpenSSL refuses the key) */
  readonly key: KeyObject;
  cert?: SshCertificate;
}

const CURVES: Record<string, { crv: string; size: number; hash: string }> = {
  nistp256: { crv: 'P-256', size: 32, hash: 'sha256' },
  nistp384: { crv: 'P-384', size: 48, hash: 'sha384' },
  nistp521: { crv: 'P-521', size: 66, hash: 'sha512' },
};
const CERT_SUFFIX = '-cert-v01@openssh.com';
const MAX_BLOB = 16 * 1024;
const MAX_PRINCIPALS = 256;
export const SSH_FOREVER = 0xffffffffffffffffn;

export const fingerprintOf = (plainBlob: Buffer): string => `SHA256:${createHash('sha256').update(plainBlob).digest('base64').replace(/=+$/, '')}`;

const b64u = (b: Buffer): string => b.toString('base64url');

function leftPad(b: Buffer, n: number): Buffer {
  if (b.length >= n) return b;
  const out = Buffer.alloc(n);
  b.copy(out, n - b.length);
  return out;
}

interface PublicFields {
  jwk: JsonWebKey;
  algorithm: SshPublicKey['algorithm'];
  bits: number;
}

/**
 * The KeyObject of `jwk`, made when first needed (most verifications use the allowed
 * signer's, made once): a key OpenSSL refuses (an EC point off its curve) is `fail`.
 */
function lazyKey(target: { key: KeyObject }, jwk: JsonWebKey, type: string, fail: Fail): void {
  let made: KeyObject | undefined;
  Object.defineProperty(target, 'key', {
    enumerable: true,
    get(): KeyObject {
      if (!made) {
        try {
          made = createPublicKey({ key: jwk, format: 'jwk' });
        } catch (err) {
          throw fail(`${type} key rejected by the crypto library: ${(err as Error).message}`);
        }
      }
      return made;
    },
  });
}

/** Read the public fields of a plain key type. */
function readPublicFields(r: SshReader, plainType: string, fail: Fail): PublicFields {
  if (plainType === 'ssh-ed25519') {
    const pk = r.string('ed25519 public key');
    if (pk.length !== 32) throw fail(`an ed25519 public key is 32 bytes, this one ${pk.length}`);
    return { jwk: { kty: 'OKP', crv: 'Ed25519', x: b64u(pk) }, algorithm: 'ED25519', bits: 256 };
  }
  if (plainType.startsWith('ecdsa-sha2-')) {
    const name = plainType.slice('ecdsa-sha2-'.length);
    const curve = CURVES[name];
    if (!curve) throw fail(`unknown ECDSA curve ${JSON.stringify(name)}`);
    const id = r.text('curve name');
    if (id !== name) throw fail(`key type ${plainType} carries curve ${JSON.stringify(id)}`);
    const q = r.string('ECDSA point');
    if (q.length !== 1 + 2 * curve.size || q[0] !== 4) throw fail(`the ECDSA point is not an uncompressed ${curve.crv} point`);
    const x = q.subarray(1, 1 + curve.size);
    const y = q.subarray(1 + curve.size);
    return { jwk: { kty: 'EC', crv: curve.crv, x: b64u(x), y: b64u(y) }, algorithm: 'ECDSA', bits: curve.size === 66 ? 521 : curve.size * 8 };
  }
  if (plainType === 'ssh-rsa') {
    const e = r.mpint('RSA exponent');
    const n = r.mpint('RSA modulus');
    const bits = n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0] as number));
    if (bits < 1024) throw fail(`an RSA key of ${bits} bits is too short (1024 at least, as OpenSSH requires)`);
    if (bits > 16384) throw fail(`an RSA key of ${bits} bits is too long (16384 at most)`);
    if (e.length === 0 || e.length > 8) throw fail(`the RSA exponent is ${e.length} bytes long`);
    return { jwk: { kty: 'RSA', n: b64u(n), e: b64u(e) }, algorithm: 'RSA', bits };
  }
  if (plainType.startsWith('sk-')) throw fail(`security-key (FIDO) SSH keys (${plainType}) are not supported`);
  if (plainType === 'ssh-dss') throw fail('DSA SSH keys are not supported (OpenSSH removed them)');
  throw fail(`unsupported SSH key type ${JSON.stringify(plainType.slice(0, 80))}`);
}

/**
 * Parse an SSH public key wire blob. `fail` makes the error (an SSH key or an SSH
 * signature error, depending on where the blob came from).
 */
export function parseSshPublicKey(blob: Buffer, fail: Fail = (why) => E.sshKeyInvalid(why)): SshPublicKey {
  if (blob.length > MAX_BLOB) throw fail(`the key is ${blob.length} bytes, more than ${MAX_BLOB}`);
  const r = new SshReader(blob, fail, 'the SSH public key');
  const type = r.text('key type');
  if (!type.endsWith(CERT_SUFFIX)) {
    const { jwk, algorithm, bits } = readPublicFields(r, type, fail);
    r.end();
    const out = { type, blob, fingerprint: fingerprintOf(blob), algorithm, bits } as SshPublicKey;
    lazyKey(out, jwk, type, fail);
    return out;
  }
  const plainType = type.slice(0, -CERT_SUFFIX.length);
  r.string('certificate nonce');
  const fieldsAt = r.pos;
  const { jwk, algorithm, bits } = readPublicFields(r, plainType, fail);
  const plainBlob = Buffer.concat([sshStrings(plainType), blob.subarray(fieldsAt, r.pos)]);
  r.u64('serial');
  const certType = r.u32('certificate type');
  const keyId = r.text('key id');
  const pr = new SshReader(r.string('valid principals'), fail, 'the certificate principals');
  const principals: string[] = [];
  while (pr.pos < pr.buf.length) {
    if (principals.length >= MAX_PRINCIPALS) throw fail(`the certificate names more than ${MAX_PRINCIPALS} principals`);
    principals.push(pr.string('principal').toString('utf8'));
  }
  const validAfter = r.u64('valid after');
  const validBefore = r.u64('valid before');
  const co = new SshReader(r.string('critical options'), fail, 'the certificate critical options');
  const criticalOptions: string[] = [];
  while (co.pos < co.buf.length) {
    criticalOptions.push(co.text('option name'));
    co.string('option value');
  }
  r.string('extensions');
  r.string('reserved');
  const caBlob = r.string('signature key');
  const signed = blob.subarray(0, r.pos);
  const signature = r.string('CA signature');
  r.end();
  let signatureKey: SshPublicKey;
  try {
    signatureKey = parseSshPublicKey(Buffer.from(caBlob), fail);
  } catch (err) {
    throw fail(`the certificate's CA key is unusable: ${(err as StraitError).message}`);
  }
  if (signatureKey.cert) throw fail('the certificate is signed by another certificate');
  const out = {
    type,
    blob,
    fingerprint: fingerprintOf(plainBlob),
    algorithm,
    bits,
    cert: { certType, keyId, principals, validAfter, validBefore, criticalOptions, signatureKey, signed, signature },
  } as SshPublicKey;
  lazyKey(out, jwk, plainType, fail);
  return out;
}

/** The text form of a key: ed25519 "ED25519", else the algorithm with its size ("RSA-3072"). */
export const describeSshKey = (k: SshPublicKey): string => `${k.algorithm === 'ED25519' ? 'ED25519' : `${k.algorithm}-${k.bits}`}${k.cert ? '-CERT' : ''}`;

/** Parse "type base64 [comment]" (one line of a .pub or authorized_keys file, without options). */
export function parseSshPublicKeyLine(text: string): { key: SshPublicKey; comment: string } {
  const line = text.trim();
  const m = /^(\S+)\s+([A-Za-z0-9+/]+={0,2})(?:\s+(.*))?$/.exec(line);
  if (!m) throw E.sshKeyInvalid('expected "type base64 [comment]"', line.slice(0, 100));
  const blob = Buffer.from(m[2] as string, 'base64');
  const key = parseSshPublicKey(blob, (why) => E.sshKeyInvalid(why, line.slice(0, 100)));
  void key.key; // a key OpenSSL refuses is refused here, not at its first use
  if (key.type !== m[1]) throw E.sshKeyInvalid(`the line says ${m[1] as string} but the key is ${key.type}`, line.slice(0, 100));
  return { key, comment: (m[3] ?? '').trim() };
}

/** The canonical text of a key: "type base64". */
export const sshKeyText = (k: SshPublicKey): string => `${k.type} ${k.blob.toString('base64')}`;

/**
 * Check an SSH signature blob ("string algorithm, string signature") made by `key`
 * (a plain key or a certificate's key) over `data`. Returns undefined when it holds,
 * else why not.
 */
export function checkSshSignatureBlob(key: SshPublicKey, sigBlob: Buffer, data: Buffer, fail: Fail): string | undefined {
  const r = new SshReader(sigBlob, fail, 'the signature blob');
  const alg = r.text('signature algorithm');
  const sig = r.string('signature');
  r.end();
  const plain = key.type.endsWith(CERT_SUFFIX) ? key.type.slice(0, -CERT_SUFFIX.length) : key.type;
  if (key.algorithm === 'ED25519') {
    if (alg !== 'ssh-ed25519') return `signature algorithm ${JSON.stringify(alg)} does not fit an ed25519 key`;
    if (sig.length !== 64) return `an ed25519 signature is 64 bytes, this one ${sig.length}`;
    return cryptoVerify(null, data, key.key, sig) ? undefined : 'the ed25519 signature does not match';
  }
  if (key.algorithm === 'ECDSA') {
    if (alg !== plain) return `signature algorithm ${JSON.stringify(alg)} does not fit an ${plain} key`;
    const curve = CURVES[plain.slice('ecdsa-sha2-'.length)] as { size: number; hash: string };
    const rs = new SshReader(sig, fail, 'the ECDSA signature');
    const rr = rs.mpint('r');
    const ss = rs.mpint('s');
    rs.end();
    if (rr.length > curve.size || ss.length > curve.size) return 'the ECDSA signature values are out of range';
    const p1363 = Buffer.concat([leftPad(rr, curve.size), leftPad(ss, curve.size)]);
    return cryptoVerify(curve.hash, data, { key: key.key, dsaEncoding: 'ieee-p1363' }, p1363) ? undefined : 'the ECDSA signature does not match';
  }
  const hash = alg === 'rsa-sha2-256' ? 'sha256' : alg === 'rsa-sha2-512' ? 'sha512' : undefined;
  if (!hash) return `RSA signature algorithm ${JSON.stringify(alg)} is not acceptable (rsa-sha2-256 or rsa-sha2-512; never SHA-1 ssh-rsa)`;
  const modLen = Math.ceil(key.bits / 8);
  if (sig.length > modLen) return 'the RSA signature is longer than the modulus';
  return cryptoVerify(hash, data, { key: key.key, padding: constants.RSA_PKCS1_PADDING }, leftPad(sig, modLen))
    ? undefined
    : 'the RSA signature does not match';
}
