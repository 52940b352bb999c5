// Joining two sockets into one proxied connection. Handlers are module-level and find
// the other side through a symbol field, so a connection costs no closures. A failure on
// one side resets (RST) the other, as Envoy's TCP proxy does, and so does a side that
// closes before its end; a clean end is passed on.
// The data path is a 'data' handler writing straight into the peer (no pipe() machinery):
// a chunk costs one write call; the reader pauses only when the peer's buffer is full.
// Sockets we connect ourselves (connectSpliced) read with node's `onread` option instead:
// into one reused buffer, straight to a callback, past the Readable stream machinery and
// without a fresh buffer per read.
import { connect, type NetConnectOpts, type Socket } from 'node:net';

const kPeer = Symbol('strait.peer');
const kRaw = Symbol('strait.raw');
const kReads = Symbol('strait.reads');

/** the read buffer of a connectSpliced socket (64 KiB, what libuv offers a stream read) */
const READ_BUFFER = 64 * 1024;

interface ReadState {
  buf: Buffer;
}

interface Joined extends Socket {
  [kPeer]?: Joined;
  /** the TCP socket under a TLS socket (the one that can be reset) */
  [kRaw]?: Socket;
  /** set on sockets made by connectSpliced: they read through onread, not 'data' */
  [kReads]?: ReadState;
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

/**
 * A side closed. After its end (all it read was passed on) the peer is ended, if it was not
 * already; closed before its end (destroyed, or cut under it: a TLS socket whose stream
 * went), what it still held is lost, and the peer is reset rather than shown a clean end
 * of a stream that was cut short.
 */
function onSideClose(this: Joined): void {
  const peer = this[kPeer];
  if (!peer || peer.destroyed) return;
  if (!this.readableEnded) resetSocket(rawOf(peer));
  else if (!peer.writableEnded) peer.end();
}

function onSideData(this: Joined, chunk: Buffer): void {
  const peer = this[kPeer] as Joined;
  if (!peer.write(chunk)) this.pause();
}

/**
 * onread callback of a connectSpliced socket: the chunk sits in the socket's reused buffer,
 * which may be overwritten by the next read only once nothing refers to it any more:
 * - a TLS peer with nothing queued encrypts the chunk inside write() (SSL_write consumes it,
 *   or node copies what it could not write), so the buffer is free when write() returns,
 *   although the write completes later;
 * - any other peer is done with it when its writable state is empty after write() (the
 *   kernel took it all at once).
 * A chunk that would queue behind earlier writes is written as a copy of its own size; one
 * the kernel took only in part keeps the buffer, and the next read goes into a fresh one.
 * Returning false stops reading until the peer drains.
 */
function onSpliceRead(this: Joined, nread: number, buf: Buffer): boolean {
  const peer = this[kPeer];
  if (!peer) return false; // unspliced: the native relay reads this socket

  // the peer already has writes queued: the chunk will wait behind them, so it goes as a
  // copy of its own size and the reused buffer stays (no 64 KiB slab held per queued chunk)
  if (peer.writableLength > 0) return peer.write(Buffer.from(buf.subarray(0, nread)));
  const consumed = (peer as Joined & { encrypted?: boolean }).encrypted === true;
  const ok = peer.write(buf.subarray(0, nread));
  if (!consumed && peer.writableLength > 0) (this[kReads] as ReadState).buf = Buffer.allocUnsafeSlow(READ_BUFFER);
  return ok;
}

/** How a proxy opens its upstream connections: net.connect, or one from inside a pod's namespace. */
export type Connector = (opts: NetConnectOpts) => Socket;

/**
 * Connect a socket that will be one side of splice(): it reads through node's public
 * `onread` option (a reused buffer and a callback) rather than 'data' events. Splice it in
 * the same tick (before it can connect and read): its reads go straight to the peer.
 */
export function connectSpliced(opts: NetConnectOpts, connector: Connector = connect): Socket {
  const st: ReadState = { buf: Buffer.allocUnsafeSlow(READ_BUFFER) };
  const sock = connector({ ...opts, onread: { buffer: () => st.buf, callback: onSpliceRead } }) as Joined;
  sock[kReads] = st;
  return sock;
}

function onSideDrain(this: Joined): void {
  const peer = this[kPeer] as Joined;
  if (!peer.destroyed) peer.resume();
}

function onSideEnd(this: Joined): void {
  const peer = this[kPeer] as Joined;
  if (!peer.destroyed && !peer.writableEnded) peer.end();
}

/** What splice() listens to on each side ('data' apart: a side that reads itself resumes instead); unsplice() takes the same off. */
const SIDE_HANDLERS: readonly (readonly ['error' | 'close' | 'end' | 'drain', (this: Joined) => void])[] = [
  ['error', onSideError],
  ['close', onSideClose],
  ['end', onSideEnd],
  ['drain', onSideDrain],
];

/** Pipe a and b both ways. `aRaw`/`bRaw` are the TCP sockets under TLS sockets, when any. */
export function splice(a: Socket, b: Socket, aRaw?: Socket, bRaw?: Socket): void {
  const ja = a as Joined;
  const jb = b as Joined;
  ja[kPeer] = jb;
  jb[kPeer] = ja;
  if (aRaw && aRaw !== a) ja[kRaw] = aRaw;
  if (bRaw && bRaw !== b) jb[kRaw] = bRaw;
  for (const s of [a, b]) for (const [event, handler] of SIDE_HANDLERS) s.on(event, handler);
  a.setNoDelay(true);
  b.setNoDelay(true);
  if (ja[kReads]) a.resume();
  else a.on('data', onSideData);
  if (jb[kReads]) b.resume();
  else b.on('data', onSideData);
}

/**
 * Undo splice(): the two sockets keep only a guard against stray errors. The native TLS
 * relay moves their data from now on (and closes them).
 */
export function unsplice(a: Socket, b: Socket): void {
  for (const s of [a, b] as Joined[]) {
    for (const [event, handler] of SIDE_HANDLERS) s.off(event, handler);
    s.off('data', onSideData);
    s.on('error', ignore);
    s[kPeer] = undefined;
  }
}

function ignore(): void {}
