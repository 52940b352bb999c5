// One tunnel session: a key and a salt per direction, a send counter and a replay
// window. Created by a handshake; the nonce is salt ‖ 64-bit counter and the counter
// only grows, so a (key, nonce) pair is never reused. The AEAD and the window run in
// node:crypto and replay-window.ts (the reference), or in a SessionCrypto (the gateway's
// native data path, native-session.ts), which then holds the counter and the window that
// the native thread shares: every seal and open of the session goes through it.
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject } from 'node:crypto';
import { DATA_HEADER, TAG_LEN } from '../../wire/tunnel/index.js';
import { ReplayWindow } from './replay-window.js';

export interface SessionKeys {
  send: Buffer;
  recv: Buffer;
  sendSalt: Buffer;
  recvSalt: Buffer;
}

/** The replay window's contract (replay-window.ts). */
export interface Replay {
  check(seq: number): boolean;
  update(seq: number): boolean;
  readonly highest: number;
}

/** A session's AEAD, counter and window held elsewhere (native/src/session.c). */
export interface SessionCrypto extends Replay {
  /** the native session's id (native data path registrations) */
  readonly id: number;
  /** the next send sequence number, taken */
  takeSeq(): number;
  /** the next send sequence number, not taken */
  readonly sendSeq: number;
  /** ciphertext ‖ tag; `header` (16 bytes) carries the sequence number of the nonce */
  seal(header: Buffer, payload: Uint8Array): Buffer;
  /** the plaintext of header ‖ ciphertext ‖ tag, undefined when the tag fails */
  open(pkt: Buffer): Buffer | undefined;
  /** wipe the keys; the native data path forgets the session */
  close(): void;
}

export type SessionCryptoFactory = (keys: SessionKeys) => SessionCrypto;

export class Session {
  private readonly sendKey: KeyObject | undefined;
  private readonly recvKey: KeyObject | undefined;
  private readonly sendNonce = Buffer.alloc(12);
  private readonly recvNonce = Buffer.alloc(12);
  readonly replay: Replay;
  /** the native AEAD, counter and window (undefined: node:crypto and ReplayWindow) */
  readonly crypto: SessionCrypto | undefined;
  private seq = 0;
  /** responder sessions wait for the first authenticated packet (key confirmation) */
  confirmed: boolean;

  constructor(
    readonly localIndex: number,
    readonly remoteIndex: number,
    readonly isInitiator: boolean,
    readonly createdAt: number,
    keys: SessionKeys,
    crypto?: SessionCryptoFactory,
  ) {
    this.confirmed = isInitiator;
    if (crypto !== undefined) {
      this.crypto = crypto(keys);
      this.replay = this.crypto;
      return;
    }
    this.sendKey = createSecretKey(keys.send);
    this.recvKey = createSecretKey(keys.recv);
    keys.sendSalt.copy(this.sendNonce, 0, 0, 4);
    keys.recvSalt.copy(this.recvNonce, 0, 0, 4);
    this.replay = new ReplayWindow();
  }

  /** the next send sequence number (not taken) */
  get sendSeq(): number {
    return this.crypto !== undefined ? this.crypto.sendSeq : this.seq;
  }

  /** take the next send sequence number */
  takeSeq(): number {
    return this.crypto !== undefined ? this.crypto.takeSeq() : this.seq++;
  }

  /** the session is gone (dropped, expired, replaced): native keys are wiped */
  close(): void {
    this.crypto?.close();
  }

  /**
   * Seal `payload` as a data packet; `header` (16 bytes, already written with the
   * sequence number `seq`) is the associated data. Returns [ciphertext, tag].
   */
  seal(header: Buffer, seq: number, payload: Uint8Array): [Buffer, Buffer] {
    if (this.crypto !== undefined) {
      const out = this.crypto.seal(header, payload);
      return [out.subarray(0, out.length - TAG_LEN), out.subarray(out.length - TAG_LEN)];
    }
    const n = this.sendNonce;
    n.writeUInt32BE(Math.floor(seq / 0x100000000), 4);
    n.writeUInt32BE(seq >>> 0, 8);
    const c = createCipheriv('aes-256-gcm', this.sendKey as KeyObject, n, { authTagLength: TAG_LEN });
    c.setAAD(header);
    const ct = c.update(payload);
    c.final();
    return [ct, c.getAuthTag()];
  }

  /** Open the data packet in `pkt` (header + ciphertext + tag). Undefined when the tag fails. */
  open(pkt: Buffer, seq: number): Buffer | undefined {
    if (this.crypto !== undefined) return this.crypto.open(pkt);
    const n = this.recvNonce;
    n.writeUInt32BE(Math.floor(seq / 0x100000000), 4);
    n.writeUInt32BE(seq >>> 0, 8);
    const end = pkt.length;
    try {
      const d = createDecipheriv('aes-256-gcm', this.recvKey as KeyObject, n, { authTagLength: TAG_LEN });
      d.setAAD(pkt.subarray(0, DATA_HEADER));
      d.setAuthTag(pkt.subarray(end - TAG_LEN, end));
      const out = d.update(pkt.subarray(DATA_HEADER, end - TAG_LEN));
      d.final();
      return out;
    } catch {
      return undefined;
    }
  }
}
