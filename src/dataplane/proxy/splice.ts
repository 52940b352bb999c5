// Joining two sockets into one proxied connection. Handlers are module-level and find
// the other side through a symbol field, so a connection costs no closures. A failure on
// one side resets (RST) the other, as Envoy's TCP proxy does; a clean end is passed on.
// The data path is a 'data' handler writing straight into the peer (no pipe() machinery):
// a chunk costs one write call; the reader pauses only when the peer's buffer is full.
import type { Socket } from 'node:net';

const kPeer = Symbol('strait.peer');
const kRaw = Symbol('strait.raw');

interface Joined extends Socket {
  [kPeer]?: Joined;
  /** the TCP socket under a TLS socket (the one that can be reset) */
  [kRaw]?: Socket;
}

/** Abort a TCP connection with RST (SO_LINGER 0), falling back to destroy(). */
export function resetSocket(sock: Socket): void {
  if (sock.destroyed) return;
  try {
    sock.resetAndDestroy();
  } catch {
    sock.destroy();
  }
}

function rawOf(s: Joined): Socket {
  return s[kRaw] ?? s;
}

function onSideError(this: Joined): void {
  const peer = this[kPeer];
  if (peer) resetSocket(rawOf(peer));
  resetSocket(rawOf(this));
}

function onSideClose(this: Joined): void {
  const peer = this[kPeer];
  if (peer && !peer.destroyed && !peer.writableEnded) peer.end();
}

function onSideData(this: Joined, chunk: Buffer): void {
  const peer = this[kPeer] as Joined;
  if (!peer.write(chunk)) this.pause();
}

function onSideDrain(this: Joined): void {
  const peer = this[kPeer] as Joined;
  if (!peer.destroyed) peer.resume();
}

function onSideEnd(this: Joined): void {
  const peer = this[kPeer] as Joined;
  if (!peer.destroyed && !peer.writableEnded) peer.end();
}

/** Pipe a and b both ways. `aRaw`/`bRaw` are the TCP sockets under TLS sockets, when any. */
export function splice(a: Socket, b: Socket, aRaw?: Socket, bRaw?: Socket): void {
  const ja = a as Joined;
  const jb = b as Joined;
  ja[kPeer] = jb;
  jb[kPeer] = ja;
  if (aRaw && aRaw !== a) ja[kRaw] = aRaw;
  if (bRaw && bRaw !== b) jb[kRaw] = bRaw;
  a.on('error', onSideError);
  b.on('error', onSideError);
  a.on('close', onSideClose);
  b.on('close', onSideClose);
  a.on('end', onSideEnd);
  b.on('end', onSideEnd);
  a.on('drain', onSideDrain);
  b.on('drain', onSideDrain);
  a.setNoDelay(true);
  b.setNoDelay(true);
  a.on('data', onSideData);
  b.on('data', onSideData);
}
