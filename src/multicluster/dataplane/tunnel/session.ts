// One tunnel session: a key and a salt per direction, a send counter and a replay
// window. Created by a handshake; the nonce is salt ‖ 64-bit counter and the counter
// only grows, so a (key, nonce) pair is never reused.
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject } from 'node:crypto';
import { DATA_HEADER, TAG_LEN } from '../../wire/tunnel/index.js';
import { ReplayWindow } from './replay-window.js';

export class Session {
  readonly sendKey: KeyObject;
  readonly recvKey: KeyObject;
  private readonly sendNonce = Buffer.alloc(12);
  private readonly recvNonce = Buffer.alloc(12);
  readonly replay = new ReplayWindow();
  sendSeq = 0;
  /** responder sessions wait for the first authenticated packet (key confirmation) */
  confirmed: boolean;

  constructor(
    readonly localIndex: number,
    readonly remoteIndex: number,
    readonly isInitiator: boolean,
    readonly createdAt: number,
    keys: { send: Buffer; recv: Buffer; sendSalt: Buffer; recvSalt: Buffer },
  ) {
    this.sendKey = createSecretKey(keys.send);
    this.recvKey = createSecretKey(keys.recv);
    keys.sendSalt.copy(this.sendNonce, 0, 0, 4);
    keys.recvSalt.copy(this.recvNonce, 0, 0, 4);
    this.confirmed = isInitiator;
  }

  /**
   * Seal `payload` as a data packet; `header` (16 bytes, already written with the
   * sequence number `seq`) is the associated data. Returns [ciphertext, tag].
   */
  seal(header: Buffer, seq: number, payload: Uint8Array): [Buffer, Buffer] {
    const n = this.sendNonce;
    n.writeUInt32BE(Math.floor(seq / 0x100000000), 4);
    n.writeUInt32BE(seq >>> 0, 8);
    const c = createCipheriv('aes-256-gcm', this.sendKey, n, { authTagLength: TAG_LEN });
    c.setAAD(header);
    const ct = c.update(payload);
    c.final();
    return [ct, c.getAuthTag()];
  }

  /** Open the data packet in `pkt` (header + ciphertext + tag). Undefined when the tag fails. */
  open(pkt: Buffer, seq: number): Buffer | undefined {
    const n = this.recvNonce;
    n.writeUInt32BE(Math.floor(seq / 0x100000000), 4);
    n.writeUInt32BE(seq >>> 0, 8);
    const end = pkt.length;
    try {
      const d = createDecipheriv('aes-256-gcm', this.recvKey, n, { authTagLength: TAG_LEN });
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
