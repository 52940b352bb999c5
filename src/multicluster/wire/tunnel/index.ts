// Tunnel messages (docs/tunnel-protocol.md): handshake initiation (1), response (2),
// cookie reply (3) and data (4), plus the handshake payloads. All integers big-endian.
// decode() returns views into the input; malformed input is a StraitError.
import { need, outBuf, malformed, toBuffer, readU64, writeU64 } from '../../../base/bounds/index.js';

export const TUNNEL_PORT = 4500;
export const PROTOCOL_VERSION = 1;
export const TYPE_INIT = 1;
export const TYPE_RESPONSE = 2;
export const TYPE_COOKIE = 3;
export const TYPE_DATA = 4;
export const NEXT_IPV4 = 0;
export const NEXT_PROBE = 1;
export const NEXT_PROBE_REPLY = 2;
/** IPv4 (super-)packet preceded by a 10-byte virtio_net_hdr (TUN offload); only to peers advertising FEATURE_VNET */
export const NEXT_IPV4_VNET = 3;
/**
 * "Your handshakes fail my mac1 check": sent over the session that still works to a peer
 * whose new handshakes do not authenticate here (it runs another PSK); only to peers
 * advertising FEATURE_HEALTH, so an older peer never receives one. Payload: one zero byte.
 */
export const NEXT_PSK_NOTICE = 4;
/**
 * "I am fenced": a gateway that lost its HA lease (or could not renew it) sends nothing
 * else into the tunnel; this notice, over its sessions, lets the peer say `peer fenced`
 * instead of a generic loss. Only to peers advertising FEATURE_FENCE_NOTICE. Payload: one
 * zero byte. It moves nothing at the receiver: not its address, not its health.
 */
export const NEXT_FENCE_NOTICE = 5;
/** the highest next header a data message may carry */
export const NEXT_MAX = NEXT_FENCE_NOTICE;
/** feature bits in the handshake payloads */
export const FEATURE_VNET = 1;
/** accepts fragment messages (type 5): one AEAD over a super-packet, split into path-sized datagrams */
export const FEATURE_FRAG = 2;
/** understands NEXT_PSK_NOTICE (health: a PSK mismatch named on both sides at once) */
export const FEATURE_HEALTH = 4;
/** understands NEXT_FENCE_NOTICE (health: a peer gateway fenced by HA named as such) */
export const FEATURE_FENCE_NOTICE = 8;
export const TYPE_FRAGMENT = 5;
export const KEY_LEN = 32;
export const TAG_LEN = 16;
export const MAC_LEN = 16;
export const DATA_HEADER = 16;
export const INIT_FIXED = 8 + KEY_LEN + 2 * MAC_LEN;
export const RESPONSE_FIXED = 12 + KEY_LEN + 2 * MAC_LEN;
export const COOKIE_LEN = 8 + 12 + 16 + TAG_LEN;
/** fragment header: type, next, index, count, SPI, sequence, fragment size, reserved */
export const FRAG_HEADER = 20;
/** most fragments of one message */
export const MAX_FRAGMENTS = 64;
/** smallest fragment size (bytes of ciphertext per fragment but the last) */
export const MIN_FRAGMENT = 64;
/** largest sealed body (ciphertext + tag) of a fragmented message: virtio_net_hdr + 64 KiB packet + tag, rounded up */
export const MAX_FRAGMENTED_BODY = 65536 + 64;
const CLUSTER_ID = /^[a-z0-9][a-z0-9.-]{0,62}$/;

function checkReserved(buf: Buffer, offset: number, what: string): void {
  if (buf[offset + 2] !== 0 || buf[offset + 3] !== 0) throw malformed(what, offset + 2, 'reserved bytes must be zero');
}

function checkKey(k: Uint8Array, len: number, what: string, offset: number): void {
  if (k.length !== len) throw malformed(what, offset, `field must be ${len} bytes, got ${k.length}`);
}

/** Message type of a datagram, or -1 when empty. */
export function peekType(buf: Uint8Array): number {
  return buf.length === 0 ? -1 : (buf[0] as number);
}

// --- initiation -------------------------------------------------------------------

export interface HandshakeInit {
  version: number;
  senderIndex: number;
  ephemeral: Uint8Array;
  /** encrypted payload1 including its tag */
  payload: Uint8Array;
  mac1: Uint8Array;
  mac2: Uint8Array;
}

/**
 * Initiation and response share one layout: type, version, reserved, the sender's index,
 * (response only) the receiver's index, the ephemeral key, the encrypted payload, mac1, mac2.
 */
function handshakeCodec<M extends HandshakeInit & { receiverIndex?: number }>(type: number, what: string, withReceiver: boolean) {
  const eph = withReceiver ? 12 : 8;
  const body = eph + KEY_LEN;
  const fixed = withReceiver ? RESPONSE_FIXED : INIT_FIXED;
  return {
    encodingLength(m: M): number {
      return fixed + m.payload.length;
    },
    encode(m: M, buf?: Buffer, offset = 0): Buffer {
      checkKey(m.ephemeral, KEY_LEN, what, offset + eph);
      checkKey(m.mac1, MAC_LEN, `${what} mac1`, offset);
      checkKey(m.mac2, MAC_LEN, `${what} mac2`, offset);
      const out = outBuf(buf, offset, fixed + m.payload.length, what);
      out[offset] = type;
      out[offset + 1] = m.version & 0xff;
      out[offset + 2] = 0;
      out[offset + 3] = 0;
      out.writeUInt32BE(m.senderIndex >>> 0, offset + 4);
      if (withReceiver) out.writeUInt32BE((m.receiverIndex ?? 0) >>> 0, offset + 8);
      out.set(m.ephemeral, offset + eph);
      out.set(m.payload, offset + body);
      const p = offset + body + m.payload.length;
      out.set(m.mac1, p);
      out.set(m.mac2, p + MAC_LEN);
      return out;
    },
    /** The whole rest of the datagram is the message. */
    decode(input: Uint8Array, offset = 0): M {
      const buf = toBuffer(input);
      need(buf, offset, fixed + TAG_LEN, what);
      if (buf[offset] !== type) throw malformed(what, offset, `type ${buf[offset]} is not ${type}`);
      checkReserved(buf, offset, what);
      const end = buf.length;
      const m: HandshakeInit & { receiverIndex?: number } = {
        version: buf[offset + 1] as number,
        senderIndex: buf.readUInt32BE(offset + 4),
        ephemeral: buf.subarray(offset + eph, offset + body),
        payload: buf.subarray(offset + body, end - 2 * MAC_LEN),
        mac1: buf.subarray(end - 2 * MAC_LEN, end - MAC_LEN),
        mac2: buf.subarray(end - MAC_LEN, end),
      };
      if (withReceiver) m.receiverIndex = buf.readUInt32BE(offset + 8);
      return m as M;
    },
  };
}

export const handshakeInit = handshakeCodec<HandshakeInit>(TYPE_INIT, 'handshake initiation', false);

// --- response ---------------------------------------------------------------------

export interface HandshakeResponse {
  version: number;
  senderIndex: number;
  receiverIndex: number;
  ephemeral: Uint8Array;
  payload: Uint8Array;
  mac1: Uint8Array;
  mac2: Uint8Array;
}

export const handshakeResponse = handshakeCodec<HandshakeResponse>(TYPE_RESPONSE, 'handshake response', true);

// --- cookie reply -------------------------------------------------------------------

export interface CookieReply {
  version: number;
  receiverIndex: number;
  nonce: Uint8Array;
  /** encrypted cookie (16) + tag (16) */
  cookie: Uint8Array;
}

export const cookieReply = {
  encodingLength(_m?: CookieReply): number {
    return COOKIE_LEN;
  },
  encode(m: CookieReply, buf?: Buffer, offset = 0): Buffer {
    checkKey(m.nonce, 12, 'cookie reply nonce', offset + 8);
    checkKey(m.cookie, 32, 'cookie reply cookie', offset + 20);
    const out = outBuf(buf, offset, COOKIE_LEN, 'cookie reply');
    out[offset] = TYPE_COOKIE;
    out[offset + 1] = m.version & 0xff;
    out[offset + 2] = 0;
    out[offset + 3] = 0;
    out.writeUInt32BE(m.receiverIndex >>> 0, offset + 4);
    out.set(m.nonce, offset + 8);
    out.set(m.cookie, offset + 20);
    return out;
  },
  decode(input: Uint8Array, offset = 0): CookieReply {
    const buf = toBuffer(input);
    need(buf, offset, COOKIE_LEN, 'cookie reply');
    if (buf[offset] !== TYPE_COOKIE) throw malformed('cookie reply', offset, `type ${buf[offset]} is not ${TYPE_COOKIE}`);
    checkReserved(buf, offset, 'cookie reply');
    if (buf.length - offset !== COOKIE_LEN) throw malformed('cookie reply', offset, `length ${buf.length - offset} is not ${COOKIE_LEN}`);
    return {
      version: buf[offset + 1] as number,
      receiverIndex: buf.readUInt32BE(offset + 4),
      nonce: buf.subarray(offset + 8, offset + 20),
      cookie: buf.subarray(offset + 20, offset + 52),
    };
  },
};

// --- data ---------------------------------------------------------------------------

export interface DataPacket {
  next: number;
  spi: number;
  seq: number;
  /** ciphertext including the 16-byte tag */
  ciphertext: Uint8Array;
}

/** Write the 16-byte data header (hot path; the ciphertext follows at offset + 16). */
export function writeDataHeader(buf: Buffer, offset: number, next: number, spi: number, seq: number): void {
  buf[offset] = TYPE_DATA;
  buf[offset + 1] = next;
  buf[offset + 2] = 0;
  buf[offset + 3] = 0;
  buf.writeUInt32BE(spi >>> 0, offset + 4);
  writeU64(buf, seq, offset + 8);
}

export const dataPacket = {
  encodingLength(m: DataPacket): number {
    return DATA_HEADER + m.ciphertext.length;
  },
  encode(m: DataPacket, buf?: Buffer, offset = 0): Buffer {
    if (!Number.isSafeInteger(m.seq) || m.seq < 0) throw malformed('data packet', offset + 8, `sequence ${m.seq} is not an integer in 0..2^53`);
    const out = outBuf(buf, offset, dataPacket.encodingLength(m), 'data packet');
    writeDataHeader(out, offset, m.next & 0xff, m.spi, m.seq);
    out.set(m.ciphertext, offset + DATA_HEADER);
    return out;
  },
  decode(input: Uint8Array, offset = 0): DataPacket {
    const buf = toBuffer(input);
    need(buf, offset, DATA_HEADER + TAG_LEN, 'data packet');
    if (buf[offset] !== TYPE_DATA) throw malformed('data packet', offset, `type ${buf[offset]} is not ${TYPE_DATA}`);
    checkReserved(buf, offset, 'data packet');
    const next = buf[offset + 1] as number;
    if (next > NEXT_MAX) throw malformed('data packet', offset + 1, `next header ${next} is unknown`);
    return {
      next,
      spi: buf.readUInt32BE(offset + 4),
      seq: readU64(buf, offset + 8, 'data packet'),
      ciphertext: buf.subarray(offset + DATA_HEADER),
    };
  },
};

// --- fragments ----------------------------------------------------------------------

export interface Fragment {
  next: number;
  index: number;
  count: number;
  spi: number;
  seq: number;
  /** bytes of body in every fragment but the last (the last has 1..size) */
  size: number;
  /** this fragment's piece of the sealed body (ciphertext ‖ tag) */
  data: Uint8Array;
}

/** Write the 20-byte fragment header (hot path: the data follows at offset + 20). */
export function writeFragmentHeader(buf: Buffer, offset: number, next: number, index: number, count: number, spi: number, seq: number, size: number): void {
  buf[offset] = TYPE_FRAGMENT;
  buf[offset + 1] = next;
  buf[offset + 2] = index;
  buf[offset + 3] = count;
  buf.writeUInt32BE(spi >>> 0, offset + 4);
  writeU64(buf, seq, offset + 8);
  buf.writeUInt16BE(size, offset + 16);
  buf[offset + 18] = 0;
  buf[offset + 19] = 0;
}

/**
 * Check a fragment header of a datagram of `len` bytes at `offset` (the hot path's rules,
 * no allocation): returns '' when valid, else the broken rule.
 */
export function fragmentRule(buf: Buffer, offset: number, len: number): string {
  if (len < FRAG_HEADER + 1) return `needs at least ${FRAG_HEADER + 1} bytes, got ${len}`;
  if (buf[offset] !== TYPE_FRAGMENT) return `type ${buf[offset]} is not ${TYPE_FRAGMENT}`;
  const next = buf[offset + 1] as number;
  if (next !== NEXT_IPV4 && next !== NEXT_IPV4_VNET) return `next header ${next} cannot be fragmented`;
  const index = buf[offset + 2] as number;
  const count = buf[offset + 3] as number;
  if (count < 2 || count > MAX_FRAGMENTS) return `fragment count ${count} is not in 2..${MAX_FRAGMENTS}`;
  if (index >= count) return `fragment index ${index} is not below the count ${count}`;
  if (buf.readUInt32BE(offset + 8) >= 0x200000) return 'sequence above 2^53';
  const size = buf.readUInt16BE(offset + 16);
  if (size < MIN_FRAGMENT) return `fragment size ${size} is below ${MIN_FRAGMENT}`;
  if ((count - 1) * size >= MAX_FRAGMENTED_BODY) return `${count} fragments of ${size} bytes exceed ${MAX_FRAGMENTED_BODY} bytes`;
  if (buf[offset + 18] !== 0 || buf[offset + 19] !== 0) return 'reserved bytes must be zero';
  const data = len - FRAG_HEADER;
  if (index < count - 1 ? data !== size : data > size)
    return `fragment ${index} of ${count} carries ${data} bytes, expected ${index < count - 1 ? size : `1..${size}`}`;
  return '';
}

export const fragment = {
  encodingLength(m: Fragment): number {
    return FRAG_HEADER + m.data.length;
  },
  encode(m: Fragment, buf?: Buffer, offset = 0): Buffer {
    if (!Number.isSafeInteger(m.seq) || m.seq < 0) throw malformed('fragment', offset + 8, `sequence ${m.seq} is not an integer in 0..2^53`);
    const out = outBuf(buf, offset, fragment.encodingLength(m), 'fragment');
    writeFragmentHeader(out, offset, m.next & 0xff, m.index & 0xff, m.count & 0xff, m.spi, m.seq, m.size & 0xffff);
    out.set(m.data, offset + FRAG_HEADER);
    const rule = fragmentRule(out, offset, fragment.encodingLength(m));
    if (rule !== '') throw malformed('fragment', offset, rule);
    return out;
  },
  /** The whole rest of the datagram is the fragment. */
  decode(input: Uint8Array, offset = 0): Fragment {
    const buf = toBuffer(input);
    need(buf, offset, FRAG_HEADER + 1, 'fragment');
    const rule = fragmentRule(buf, offset, buf.length - offset);
    if (rule !== '') throw malformed('fragment', offset, rule);
    return {
      next: buf[offset + 1] as number,
      index: buf[offset + 2] as number,
      count: buf[offset + 3] as number,
      spi: buf.readUInt32BE(offset + 4),
      seq: readU64(buf, offset + 8, 'fragment'),
      size: buf.readUInt16BE(offset + 16),
      data: buf.subarray(offset + FRAG_HEADER),
    };
  },
};

/**
 * Fragments needed for a sealed body of `body` bytes with datagrams of at most
 * `maxDatagram` bytes: [count, size]; count 1 when the plain data packet fits.
 */
export function fragmentPlan(body: number, maxDatagram: number): [number, number] {
  if (DATA_HEADER + body <= maxDatagram) return [1, body];
  const size = maxDatagram - FRAG_HEADER;
  return [Math.ceil(body / size), size];
}

// --- handshake payloads (plaintext, before AEAD) -------------------------------------

export interface InitPayload {
  timestamp: number;
  maxVersion: number;
  /** FEATURE_* bits the sender accepts */
  features: number;
  clusterId: string;
}

function checkClusterId(id: string, what: string, offset: number): void {
  if (!CLUSTER_ID.test(id)) throw malformed(what, offset, `cluster ID ${JSON.stringify(id)} must match ${CLUSTER_ID.source}`);
}

function readClusterId(buf: Buffer, offset: number, what: string): string {
  need(buf, offset, 1, what);
  const n = buf[offset] as number;
  if (buf.length - offset - 1 !== n) throw malformed(what, offset, `cluster ID length ${n} does not match the ${buf.length - offset - 1} bytes left`);
  const id = buf.toString('latin1', offset + 1, offset + 1 + n);
  checkClusterId(id, what, offset + 1);
  return id;
}

export const initPayload = {
  encodingLength(p: InitPayload): number {
    return 11 + p.clusterId.length;
  },
  encode(p: InitPayload, buf?: Buffer, offset = 0): Buffer {
    checkClusterId(p.clusterId, 'handshake payload', offset + 11);
    const out = outBuf(buf, offset, initPayload.encodingLength(p), 'handshake payload');
    writeU64(out, p.timestamp, offset);
    out[offset + 8] = p.maxVersion & 0xff;
    out[offset + 9] = p.features & 0xff;
    out[offset + 10] = p.clusterId.length;
    out.write(p.clusterId, offset + 11, 'latin1');
    return out;
  },
  decode(input: Uint8Array, offset = 0): InitPayload {
    const buf = toBuffer(input);
    need(buf, offset, 11, 'handshake payload');
    return {
      timestamp: readU64(buf, offset, 'handshake payload'),
      maxVersion: buf[offset + 8] as number,
      features: buf[offset + 9] as number,
      clusterId: readClusterId(buf, offset + 10, 'handshake payload'),
    };
  },
};

export interface ResponsePayload {
  version: number;
  features: number;
  clusterId: string;
}

export const responsePayload = {
  encodingLength(p: ResponsePayload): number {
    return 3 + p.clusterId.length;
  },
  encode(p: ResponsePayload, buf?: Buffer, offset = 0): Buffer {
    checkClusterId(p.clusterId, 'handshake payload', offset + 3);
    const out = outBuf(buf, offset, responsePayload.encodingLength(p), 'handshake payload');
    out[offset] = p.version & 0xff;
    out[offset + 1] = p.features & 0xff;
    out[offset + 2] = p.clusterId.length;
    out.write(p.clusterId, offset + 3, 'latin1');
    return out;
  },
  decode(input: Uint8Array, offset = 0): ResponsePayload {
    const buf = toBuffer(input);
    need(buf, offset, 3, 'handshake payload');
    return { version: buf[offset] as number, features: buf[offset + 1] as number, clusterId: readClusterId(buf, offset + 2, 'handshake payload') };
  },
};

export * from './vnet.js';
