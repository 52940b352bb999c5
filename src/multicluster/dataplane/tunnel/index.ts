// The strait tunnel (docs/tunnel-protocol.md): Noise NNpsk0 handshake, AEAD sessions,
// replay window, cookies, rekey, keepalives. No sockets here; see dataplane/udp.
export {
  TunnelEndpoint,
  Peer,
  TunnelCounters,
  DEFAULT_LIMITS,
  DEFAULT_MAX_DATAGRAM,
  type TunnelOptions,
  type TunnelLimits,
  type PeerConfig,
  type PeerRecord,
  type DropReason,
  type PeerStatus,
  type TunnelEvent,
} from './endpoint.js';
export { ReplayWindow, REPLAY_WINDOW_SIZE } from './replay-window.js';
export { Session, type SessionCrypto, type SessionCryptoFactory, type SessionKeys, type Replay } from './session.js';
export { NativeSessionCrypto, nativeSessions } from './native-session.js';
export { createInitiation, consumeInitiation, createResponse, consumeResponse, addMacs, type TransportKeys, type InitiatorState } from './handshake.js';
export {
  SymmetricState,
  hkdf,
  hmac,
  sha256,
  dh,
  generateKeyPair,
  keyPairFromPrivate,
  pskFromText,
  prologue,
  aeadSeal,
  aeadOpen,
  PROTOCOL_NAME,
  type KeyPair,
} from './noise.js';
export { CookieChecker, mac, mac1Key, cookieKey, openCookie } from './cookie.js';
export { Reassembler, ReassemblyCounters, FRAG_PENDING, FRAG_DUPLICATE, FRAG_INCONSISTENT } from './reassembly.js';
export { PeerHealth, HEALTH_DEFAULTS, lossText, type HealthLimits, type HealthReason, type LatencyStats } from './health.js';
