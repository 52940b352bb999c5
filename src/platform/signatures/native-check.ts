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
    } else if (
      packet.algorithm === 22 &&
      p['Q'] instanceof Uint8Array &&
      p['Q'].length === 33 &&
      p['Q'][0] === 0x40 &&
      String((p['oid'] as { getName?: () => string } | undefined)?.getName?.() ?? '').startsWith('ed25519')
    ) {
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

/** The public-key operation of one check, ready to run here or on another thread (crypto.verify's arguments). */
export interface PublicKeyJob {
  /** hash name for RSA (PKCS#1 v1.5 over `data`); null for Ed25519 (over `data`, the document digest) */
  algo: string | null;
  data: Uint8Array;
  key: KeyObject;
  kind: 'rsa' | 'ed25519';
  signature: Uint8Array;
  /** why a signature that checks out is still bad (expired, a critical subpacket): thrown after a good check */
  late: string | undefined;
}

/** What is checked before the signature's values are read: the key, the hash and its quick check. */
export interface PreparedCheck {
  k: { key: KeyObject; kind: 'rsa' | 'ed25519'; size: number };
  hashName: string;
  toHash: Uint8Array;
  digest: Buffer;
}

/** OpenSSL's check of a job on this thread. */
export function runPublicKeyJob(job: PublicKeyJob): boolean {
  return cryptoVerify(job.algo, job.data, job.kind === 'rsa' ? { key: job.key, padding: constants.RSA_PKCS1_PADDING } : job.key, job.signature);
}

/** OpenSSL's check of a job on libuv's thread pool (many checks at once use every core). */
export function runPublicKeyJobPooled(job: PublicKeyJob): Promise<boolean> {
  return new Promise((resolve, reject) =>
    cryptoVerify(job.algo, job.data, job.kind === 'rsa' ? { key: job.key, padding: constants.RSA_PKCS1_PADDING } : job.key, job.signature, (err, ok) =>
      err ? reject(err) : resolve(ok),
    ),
  );
}

/**
 * Public-key checks of many signatures: added one by one, then run() gives each job's
 * outcome in the order added: false for a signature that does not check out, an Error
 * when OpenSSL refused to run the check. Pooled: each check starts on libuv's thread pool
 * as it is added (the caller reads the next commits meanwhile); not pooled: all on this
 * thread, in run(). (A batch of checks in one work item of the C addon measured at most 5%
 * less CPU than node:crypto's one job per check: not worth C code on this path.)
 */
export class PublicKeyBatch {
  private readonly jobs: PublicKeyJob[] = [];
  private readonly outcomes: (boolean | Error)[] = [];
  private left = 0;
  private wake: (() => void) | undefined;

  constructor(private readonly pooled: boolean) {}

  add(job: PublicKeyJob): void {
    const i = this.jobs.push(job) - 1;
    if (!this.pooled) return;
    this.left++;
    try {
      cryptoVerify(job.algo, job.data, job.kind === 'rsa' ? { key: job.key, padding: constants.RSA_PKCS1_PADDING } : job.key, job.signature, (err, ok) =>
        this.settle(i, err ?? ok),
      );
    } catch (err) {
      this.settle(i, err as Error);
    }
  }

  async run(): Promise<(boolean | Error)[]> {
    if (!this.pooled) {
      for (let i = 0; i < this.jobs.length; i++) this.outcomes[i] = runHere(this.jobs[i]!);
    } else if (this.left > 0) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    return this.outcomes;
  }

  private settle(i: number, outcome: boolean | Error): void {
    this.outcomes[i] = outcome;
    if (--this.left === 0) this.wake?.();
  }
}

function runHere(job: PublicKeyJob): boolean | Error {
  try {
    return runPublicKeyJob(job);
  } catch (err) {
    return err as Error;
  }
}

/**
 * The check of `sig` over `literal` with `keyPacket` up to reading the signature's values:
 * 'unsupported' when the algorithm is not handled here; throws an Error saying why the
 * signature is bad.
 */
export function prepareNativeCheck(sig: SigPacket, keyPacket: KeyPacketLike, literal: unknown): PreparedCheck | 'unsupported' {
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
  return { k, hashName, toHash, digest };
}

/** The public-key operation of a prepared check, given the signature's values; throws an Error for a malformed signature. */
export function publicKeyJob(p: PreparedCheck, sig: SigPacket, params: Record<string, Uint8Array | undefined>, date: Date): PublicKeyJob {
  const late = lateFailure(sig, date);
  if (p.k.kind === 'rsa') {
    const s = params['s'];
    if (!(s instanceof Uint8Array)) throw new Error('malformed RSA signature');
    return { algo: p.hashName, data: p.toHash, key: p.k.key, kind: 'rsa', signature: leftPad(s, p.k.size), late };
  }
  const rs =
    params['RS'] instanceof Uint8Array
      ? Buffer.from(params['RS'])
      : params['r'] instanceof Uint8Array && params['s'] instanceof Uint8Array
        ? Buffer.concat([leftPad(params['r'], 32), leftPad(params['s'], 32)])
        : undefined;
  if (!rs || rs.length !== 64) throw new Error('malformed Ed25519 signature');
  return { algo: null, data: p.digest, key: p.k.key, kind: 'ed25519', signature: rs, late };
}

/** What makes a signature bad even when the public-key check passes, in the order it is reported. */
function lateFailure(sig: SigPacket, date: Date): string | undefined {
  const expires = sig.getExpirationTime();
  if (date.getTime() >= (expires instanceof Date ? expires.getTime() : expires)) return 'Signature is expired';
  for (const u of sig.unknownSubpackets ?? []) if (u.critical) return `Unknown critical signature subpacket type ${u.type}`;
  for (const n of sig.rawNotations ?? []) if (n.critical) return `Unknown critical notation: ${n.name}`;
  if (sig.revocationKeyClass !== null && sig.revocationKeyClass !== undefined) return 'signature names a revocation key class';
  return undefined;
}

/** Why a job's signature is bad, given its check's outcome (an Error: OpenSSL refused to check); undefined when it is good. */
export function publicKeyFailure(job: PublicKeyJob, outcome: boolean | Error): Error | undefined {
  if (outcome instanceof Error) return outcome;
  try {
    concludePublicKeyJob(job, outcome);
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** The outcome of a job whose public-key check gave `ok`: throws an Error saying why the signature is bad. */
export function concludePublicKeyJob(job: PublicKeyJob, ok: boolean): void {
  if (!ok) throw new Error('Signature verification failed');
  if (job.late !== undefined) throw new Error(job.late);
}

/**
 * Check `sig` over `literal` with `keyPacket`. Resolves 'ok', or 'unsupported' when the
 * algorithm is not handled here; throws an Error saying why the signature is bad.
 * `pooled`: the public-key operation runs on libuv's thread pool.
 */
export async function nativeCheck(sig: SigPacket, keyPacket: KeyPacketLike, literal: unknown, date: Date, pooled = false): Promise<'ok' | 'unsupported'> {
  const p = prepareNativeCheck(sig, keyPacket, literal);
  if (p === 'unsupported') return p;
  const job = publicKeyJob(p, sig, (await sig.params) as Record<string, Uint8Array | undefined>, date);
  concludePublicKeyJob(job, pooled ? await runPublicKeyJobPooled(job) : runPublicKeyJob(job));
  return 'ok';
}
