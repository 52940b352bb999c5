// WireGuard-style flood defence keyed from the PSK (docs/tunnel-protocol.md):
// mac1 on every handshake message, mac2 + cookie reply when the responder is loaded.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { MAC_LEN } from '../../wire/tunnel/index.js';
import { aeadOpen, aeadSeal, hmac, sha256 } from './noise.js';

export const COOKIE_SECRET_MS = 120_000;

export function mac1Key(psk: Buffer): Buffer {
  return sha256(Buffer.from('mac1----', 'latin1'), psk);
}

export function cookieKey(psk: Buffer): Buffer {
  return sha256(Buffer.from('cookie--', 'latin1'), psk);
}

/** mac over msg[0 .. end) truncated to 16 bytes. */
export function mac(key: Uint8Array, msg: Uint8Array, end: number): Buffer {
  return hmac(key, msg.subarray(0, end)).subarray(0, MAC_LEN);
}

export function macEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function addrBytes(address: string, port: number): Buffer {
  return Buffer.from(`${address}|${port}`, 'latin1');
}

/** The responder's side: rotating secret, cookie for an address, cookie reply. */
export class CookieChecker {
  private secret = randomBytes(32);
  private secretAt: number;
  constructor(
    private readonly cookieKeyBytes: Buffer,
    now: number,
  ) {
    this.secretAt = now;
  }

  cookieFor(address: string, port: number, now: number): Buffer {
    if (now - this.secretAt >= COOKIE_SECRET_MS) {
      this.secret = randomBytes(32);
      this.secretAt = now;
    }
    return hmac(this.secret, addrBytes(address, port)).subarray(0, 16);
  }

  /** mac2 of `msg` (ending with mac1 ‖ mac2) is valid for this source. */
  checkMac2(msg: Uint8Array, address: string, port: number, now: number): boolean {
    const cookie = this.cookieFor(address, port, now);
    const end = msg.length - MAC_LEN;
    return macEqual(mac(cookie, msg, end), msg.subarray(end));
  }

  /** nonce (12) and encrypted cookie (32) for a cookie reply to a message with this mac1. */
  seal(address: string, port: number, mac1: Uint8Array, now: number): { nonce: Buffer; cookie: Buffer } {
    const nonce = randomBytes(12);
    return { nonce, cookie: aeadSeal(this.cookieKeyBytes, nonce, mac1, this.cookieFor(address, port, now)) };
  }
}

/** The initiator's side: open a cookie reply bound to the mac1 we sent. */
export function openCookie(cookieKeyBytes: Buffer, nonce: Uint8Array, sealed: Uint8Array, sentMac1: Uint8Array): Buffer | undefined {
  return aeadOpen(cookieKeyBytes, nonce, sentMac1, sealed);
}
