// The two handshake messages of Noise NNpsk0 (docs/tunnel-protocol.md), as pure
// functions: build or consume a message, no I/O and no timers.
import {
  handshakeInit,
  handshakeResponse,
  initPayload,
  responsePayload,
  MAC_LEN,
  type HandshakeInit,
  type HandshakeResponse,
  type InitPayload,
  type ResponsePayload,
} from '../../wire/tunnel/index.js';
import { mac } from './cookie.js';
import { dh, generateKeyPair, prologue, SymmetricState, type KeyPair } from './noise.js';

const ZERO_MAC = Buffer.alloc(MAC_LEN);

export interface TransportKeys {
  send: Buffer;
  recv: Buffer;
  sendSalt: Buffer;
  recvSalt: Buffer;
}

export interface InitiatorState {
  ss: SymmetricState;
  e: KeyPair;
  version: number;
  localIndex: number;
  /** mac1 of the initiation as sent: a cookie reply is bound to it */
  mac1: Buffer;
  maxVersion: number;
}

/** Put mac1 (and mac2 when a cookie is known) at the end of `msg`. */
export function addMacs(msg: Buffer, mac1KeyBytes: Buffer, cookie: Buffer | undefined): Buffer {
  const len = msg.length;
  const m1 = mac(mac1KeyBytes, msg, len - 2 * MAC_LEN);
  m1.copy(msg, len - 2 * MAC_LEN);
  if (cookie) mac(cookie, msg, len - MAC_LEN).copy(msg, len - MAC_LEN);
  else ZERO_MAC.copy(msg, len - MAC_LEN);
  return m1;
}

export function createInitiation(o: {
  psk: Buffer;
  mac1Key: Buffer;
  version: number;
  maxVersion: number;
  localIndex: number;
  clusterId: string;
  timestamp: number;
  features?: number;
  cookie?: Buffer | undefined;
  ephemeral?: KeyPair | undefined;
}): { msg: Buffer; state: InitiatorState } {
  const ss = new SymmetricState(prologue(o.version));
  ss.mixKeyAndHash(o.psk);
  const e = o.ephemeral ?? generateKeyPair();
  ss.mixHash(e.publicRaw);
  ss.mixKey(e.publicRaw);
  const payload = ss.encryptAndHash(
    initPayload.encode({ timestamp: o.timestamp, maxVersion: o.maxVersion, features: o.features ?? 0, clusterId: o.clusterId }),
  );
  const msg = handshakeInit.encode({ version: o.version, senderIndex: o.localIndex, ephemeral: e.publicRaw, payload, mac1: ZERO_MAC, mac2: ZERO_MAC });
  const mac1 = Buffer.from(addMacs(msg, o.mac1Key, o.cookie));
  return { msg, state: { ss, e, version: o.version, localIndex: o.localIndex, mac1, maxVersion: o.maxVersion } };
}

/** Undefined when the payload does not decrypt (wrong PSK, tampering). May throw STRAIT_ERR_TUNNEL_MALFORMED. */
export function consumeInitiation(psk: Buffer, m: HandshakeInit): { ss: SymmetricState; payload: InitPayload } | undefined {
  const ss = new SymmetricState(prologue(m.version));
  ss.mixKeyAndHash(psk);
  ss.mixHash(m.ephemeral);
  ss.mixKey(m.ephemeral);
  const plain = ss.decryptAndHash(m.payload);
  if (!plain) return undefined;
  return { ss, payload: initPayload.decode(plain, 0) };
}

export function createResponse(o: {
  ss: SymmetricState;
  remoteEphemeral: Uint8Array;
  mac1Key: Buffer;
  version: number;
  localIndex: number;
  remoteIndex: number;
  clusterId: string;
  features?: number;
  cookie?: Buffer | undefined;
  ephemeral?: KeyPair | undefined;
}): { msg: Buffer; keys: TransportKeys } | undefined {
  const { ss } = o;
  const e = o.ephemeral ?? generateKeyPair();
  ss.mixHash(e.publicRaw);
  ss.mixKey(e.publicRaw);
  let shared: Buffer;
  try {
    shared = dh(e, o.remoteEphemeral);
  } catch {
    return undefined; // low-order point
  }
  ss.mixKey(shared);
  const payload = ss.encryptAndHash(responsePayload.encode({ version: o.version, features: o.features ?? 0, clusterId: o.clusterId }));
  const msg = handshakeResponse.encode({
    version: o.version,
    senderIndex: o.localIndex,
    receiverIndex: o.remoteIndex,
    ephemeral: e.publicRaw,
    payload,
    mac1: ZERO_MAC,
    mac2: ZERO_MAC,
  });
  addMacs(msg, o.mac1Key, o.cookie);
  const k = ss.split();
  return { msg, keys: { send: k.r2i, recv: k.i2r, sendSalt: k.saltR2i, recvSalt: k.saltI2r } };
}

export function consumeResponse(st: InitiatorState, m: HandshakeResponse): { payload: ResponsePayload; keys: TransportKeys } | undefined {
  if (m.version !== st.version) return undefined;
  const ss = st.ss.clone(); // a forged response must not spoil the state for the real one
  ss.mixHash(m.ephemeral);
  ss.mixKey(m.ephemeral);
  let shared: Buffer;
  try {
    shared = dh(st.e, m.ephemeral);
  } catch {
    return undefined;
  }
  ss.mixKey(shared);
  const plain = ss.decryptAndHash(m.payload);
  if (!plain) return undefined;
  const payload = responsePayload.decode(plain, 0);
  const k = ss.split();
  return { payload, keys: { send: k.i2r, recv: k.r2i, sendSalt: k.saltI2r, recvSalt: k.saltR2i } };
}
