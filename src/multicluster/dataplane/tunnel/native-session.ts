// A session's AEAD, send counter and replay window in the C addon (native/src/session.c):
// the same AES-256-GCM (libcrypto's EVP, one context per direction set up once), the same
// RFC 6479 window as replay-window.ts, shared with the gateway's native data path thread.
// TypeScript still chooses the keys and decides everything; this only seals and opens.
import { native, type NativeAddon } from '../../../platform/native/index.js';
import type { SessionCrypto, SessionCryptoFactory, SessionKeys } from './session.js';

const OP_CHECK = 0;
const OP_UPDATE = 1;
const OP_HIGHEST = 2;
const OP_TAKE = 3;
const OP_PEEK = 4;
const OP_CLOSE = 5;

/** A session dropped without close() (a bug) still frees its native slot when collected. */
const collected = new FinalizationRegistry<{ addon: NativeAddon; id: number; open: boolean }>((h) => {
  if (h.open) h.addon.tunnelSessionCtl(h.id, OP_CLOSE, 0);
});

export class NativeSessionCrypto implements SessionCrypto {
  readonly id: number;
  private readonly addon: NativeAddon;
  private readonly handle: { addon: NativeAddon; id: number; open: boolean };

  constructor(keys: SessionKeys, addon: NativeAddon = native()) {
    this.addon = addon;
    this.id = addon.tunnelSessionNew(keys.send, keys.sendSalt.subarray(0, 4), keys.recv, keys.recvSalt.subarray(0, 4), 0);
    this.handle = { addon, id: this.id, open: true };
    collected.register(this, this.handle, this);
  }

  check(seq: number): boolean {
    return this.addon.tunnelSessionCtl(this.id, OP_CHECK, seq) === 1;
  }

  update(seq: number): boolean {
    return this.addon.tunnelSessionCtl(this.id, OP_UPDATE, seq) === 1;
  }

  get highest(): number {
    return this.addon.tunnelSessionCtl(this.id, OP_HIGHEST, 0);
  }

  takeSeq(): number {
    return this.addon.tunnelSessionCtl(this.id, OP_TAKE, 1);
  }

  get sendSeq(): number {
    return this.addon.tunnelSessionCtl(this.id, OP_PEEK, 0);
  }

  seal(header: Buffer, payload: Uint8Array): Buffer {
    return this.addon.tunnelSeal(this.id, header, payload);
  }

  open(pkt: Buffer): Buffer | undefined {
    return this.addon.tunnelOpen(this.id, pkt) ?? undefined;
  }

  close(): void {
    if (!this.handle.open) return;
    this.handle.open = false;
    collected.unregister(this);
    this.addon.tunnelSessionCtl(this.id, OP_CLOSE, 0);
  }
}

/** Sessions in the addon, or undefined when it is missing or too old (node:crypto then). */
export function nativeSessions(): SessionCryptoFactory | undefined {
  let addon: NativeAddon;
  try {
    addon = native();
  } catch {
    return undefined;
  }
  if (typeof addon.tunnelSessionNew !== 'function') return undefined;
  return (keys) => new NativeSessionCrypto(keys, addon);
}
