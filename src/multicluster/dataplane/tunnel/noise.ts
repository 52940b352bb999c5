// Noise_NNpsk0_25519_AESGCM_SHA256 (Noise spec rev. 34): symmetric state, HKDF,
// X25519 through node:crypto. See docs/tunnel-protocol.md.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';

export const PROTOCOL_NAME = 'Noise_NNpsk0_25519_AESGCM_SHA256';
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const EMPTY = Buffer.alloc(0);

export function sha256(...parts: Uint8Array[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

export function hmac(key: Uint8Array, ...parts: Uint8Array[]): Buffer {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** Noise HKDF(chaining_key, input_key_material, num_outputs). */
export function hkdf(ck: Uint8Array, ikm: Uint8Array, n: 2 | 3): Buffer[] {
  const temp = hmac(ck, ikm);
  const o1 = hmac(temp, Buffer.from([1]));
  const o2 = hmac(temp, o1, Buffer.from([2]));
  if (n === 2) return [o1, o2];
  return [o1, o2, hmac(temp, o2, Buffer.from([3]))];
}

export interface KeyPair {
  privateKey: KeyObject;
  publicRaw: Buffer;
}

export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return { privateKey, publicRaw: publicKey.export({ format: 'der', type: 'spki' }).subarray(12) };
}

/** A key pair from fixed private bytes (test vectors only). */
export function keyPairFromPrivate(raw: Uint8Array): KeyPair {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_X25519, raw]), format: 'der', type: 'pkcs8' });
  const publicRaw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(12);
  return { privateKey, publicRaw };
}

/** X25519; throws on a low-order public key (all-zero shared secret). */
export function dh(kp: KeyPair, publicRaw: Uint8Array): Buffer {
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_X25519, publicRaw]), format: 'der', type: 'spki' });
  return diffieHellman({ privateKey: kp.privateKey, publicKey });
}

function nonce(n: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt32BE(Math.floor(n / 0x100000000), 4);
  b.writeUInt32BE(n >>> 0, 8);
  return b;
}

export function aeadSeal(key: Uint8Array, iv: Uint8Array, ad: Uint8Array, plaintext: Uint8Array): Buffer {
  const c = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  c.setAAD(ad);
  const out = c.update(plaintext);
  c.final();
  return Buffer.concat([out, c.getAuthTag()]);
}

/** Returns undefined when the tag does not verify. */
export function aeadOpen(key: Uint8Array, iv: Uint8Array, ad: Uint8Array, ciphertext: Uint8Array): Buffer | undefined {
  if (ciphertext.length < 16) return undefined;
  try {
    const d = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    d.setAAD(ad);
    d.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
    const out = d.update(ciphertext.subarray(0, ciphertext.length - 16));
    d.final();
    return out;
  } catch {
    return undefined;
  }
}

export class SymmetricState {
  ck: Buffer;
  h: Buffer;
  private k: Buffer | undefined;
  private n = 0;

  constructor(prologue: Uint8Array) {
    const name = Buffer.alloc(32);
    name.write(PROTOCOL_NAME, 'latin1');
    this.h = name;
    this.ck = Buffer.from(name);
    this.mixHash(prologue);
  }

  clone(): SymmetricState {
    const c = Object.create(SymmetricState.prototype) as SymmetricState;
    c.ck = this.ck;
    c.h = this.h;
    c.k = this.k;
    c.n = this.n;
    return c;
  }

  mixHash(data: Uint8Array): void {
    this.h = sha256(this.h, data);
  }

  mixKey(ikm: Uint8Array): void {
    const [ck, tk] = hkdf(this.ck, ikm, 2) as [Buffer, Buffer];
    this.ck = ck;
    this.k = tk;
    this.n = 0;
  }

  mixKeyAndHash(ikm: Uint8Array): void {
    const [ck, th, tk] = hkdf(this.ck, ikm, 3) as [Buffer, Buffer, Buffer];
    this.ck = ck;
    this.mixHash(th);
    this.k = tk;
    this.n = 0;
  }

  encryptAndHash(plaintext: Uint8Array): Buffer {
    if (!this.k) throw new Error('noise: no key');
    const c = aeadSeal(this.k, nonce(this.n++), this.h, plaintext);
    this.mixHash(c);
    return c;
  }

  decryptAndHash(ciphertext: Uint8Array): Buffer | undefined {
    if (!this.k) return undefined;
    const p = aeadOpen(this.k, nonce(this.n), this.h, ciphertext);
    if (!p) return undefined;
    this.n++;
    this.mixHash(ciphertext);
    return p;
  }

  /** Transport keys: [initiator→responder key, responder→initiator key, salts (8 bytes)]. */
  split(): { i2r: Buffer; r2i: Buffer; saltI2r: Buffer; saltR2i: Buffer } {
    const [t1, t2, t3] = hkdf(this.ck, EMPTY, 3) as [Buffer, Buffer, Buffer];
    return { i2r: t1, r2i: t2, saltI2r: t3.subarray(0, 4), saltR2i: t3.subarray(4, 8) };
  }
}

export function prologue(version: number): Buffer {
  return Buffer.concat([Buffer.from('strait-tunnel', 'latin1'), Buffer.from([version & 0xff])]);
}

/** The 32-byte PSK: SHA-256 of the broker-info PSK text. */
export function pskFromText(text: string): Buffer {
  return sha256(Buffer.from(text, 'utf8'));
}
