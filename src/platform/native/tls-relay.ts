// A TLS connection's application-data records moved off Node's TLS stream after Node's own
// handshake: the native relay (native/src/tlsrec.c) joins the TLS connection's TCP socket and
// a plaintext socket, with TLS 1.3 AES-GCM records (libcrypto) and no JS per record.
//
// Node's TLS socket does not run on the TCP socket itself but on a TlsTap: a Duplex that
// passes every record between the two and parses their headers, so that the exact record
// sequence numbers of both directions are known at the hand-off:
//   - Node's traffic secrets come from its 'keylog' event (CLIENT/SERVER_TRAFFIC_SECRET_0);
//   - a record Node writes, or the peer sends, is an application record (one sequence
//     number of the application keys) when it opens under the application secret at the
//     next sequence number; records under the handshake keys do not;
//   - records from the peer go to Node one by one, NewSessionTickets included (Node makes
//     its sessions from them), until the first application-data record from the peer after
//     the owner armed the tap: that record and all that follow go to the native relay,
//     together with the sequence numbers, if at that moment nothing is in flight on Node's
//     side (no plaintext it decrypted and did not deliver, nothing it was asked to send
//     and did not send); otherwise the record goes to Node and the next one is tried.
// Anything else (TLS 1.2, ChaCha20, a KeyUpdate or an alert before the hand-off, a record
// that opens under no key it should, no hand-off after MAX_TRIES records) leaves the
// connection on Node's TLS for its whole life: the tap then only passes bytes along.
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { native } from './addon.js';

/** application-data records tried for a hand-off before the connection stays on Node's TLS */
const MAX_TRIES = 16;
/** bytes read past the hand-off point the relay takes with it (more: the record goes to Node) */
const MAX_PENDING = 48 * 1024;
const HDR = 5;
const SUITES: Record<string, number> = { TLS_AES_128_GCM_SHA256: 1, TLS_AES_256_GCM_SHA384: 2 };

type Handle = { fd?: number; reading?: boolean; readStop?: () => number };
type Role = 'client' | 'server';

/** what taps did: handed off, stayed on Node's TLS, relays that ended cleanly or failed */
export interface TlsOffloadCounters {
  handoffs: number;
  fallbacks: number;
  ended: number;
  failed: number;
}

/** counters of every tap in this process (plain integers, read at scrape time) */
export const tlsOffloadCounters: TlsOffloadCounters = { handoffs: 0, fallbacks: 0, ended: 0, failed: 0 };

export interface ArmOptions {
  /** the plaintext side the TLS socket is spliced with */
  plain: Socket;
  /**
   * Called at the hand-off, before the relay starts: stop moving data between the two
   * sockets in JS (remove the splice's handlers). Return false to refuse this hand-off.
   */
  detach: () => boolean;
  /** the relay ended ('end': both directions closed cleanly) or failed (a reason); the sockets are closed */
  onEnd?: (reason: string) => void;
}

function handleOf(s: Socket): Handle | undefined {
  return (s as unknown as { _handle?: Handle })._handle ?? undefined;
}

/**
 * Node stops reading `s` for good: its handle stops, and a read Node would start later (a
 * resume() already scheduled for the next tick does that) finds nothing to start, so no
 * byte the relay should read ends up in the socket's JS buffer.
 */
function stopReading(s: Socket): boolean {
  const h = handleOf(s);
  if (!h || typeof h.readStop !== 'function') return false;
  (s as unknown as { _read: () => void })._read = noRead;
  h.reading = false;
  return h.readStop() === 0;
}

function noRead(): void {}

function canStopReading(s: Socket): boolean {
  return typeof handleOf(s)?.readStop === 'function';
}

/** Whole TLS records out of a byte stream (headers checked only for length). */
class RecordParser {
  private buf: Buffer | undefined;
  /** the records of `chunk` (with what came before); the incomplete tail stays here */
  feed(chunk: Buffer, out: Buffer[]): void {
    let b = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    let pos = 0;
    while (b.length - pos >= HDR) {
      const len = b.readUInt16BE(pos + 3);
      if (b.length - pos < HDR + len) break;
      out.push(b.subarray(pos, pos + HDR + len));
      pos += HDR + len;
    }
    b = b.subarray(pos);
    this.buf = b.length > 0 ? b : undefined;
  }
  get partial(): number {
    return this.buf?.length ?? 0;
  }
  take(): Buffer | undefined {
    const b = this.buf;
    this.buf = undefined;
    return b;
  }
}

/** One direction's application traffic: secret, sequence number, records seen before the secret. */
class Direction {
  secret: Buffer | undefined;
  /** key ‖ iv of the secret (trial opens) */
  keyIv: Buffer | undefined;
  seq = 0;
  /** type-23 records seen before the secret was known: counted once it is */
  early: Buffer[] | undefined = [];
  readonly parser = new RecordParser();

  /** a type-23 record: does it open as the next application record? (its inner plaintext) */
  open(suite: number, rec: Buffer): Buffer | null {
    if (!this.secret) return null; // callers open records only once the secret is known
    this.keyIv ??= native().tlsTrafficKeys(suite, this.secret);
    return native().tlsRecordOpen(suite, this.keyIv, this.seq, rec);
  }
}

/**
 * The Duplex under Node's TLS socket; see the head of this file. `raw` is the TCP
 * socket; the tap reads it from now on.
 */
export class TlsTap extends Duplex {
  private suite = 0;
  private readonly rd = new Direction();
  private readonly wr = new Direction();
  private tls: TLSSocket | undefined;
  private armed: ArmOptions | undefined;
  /** 'tap': records parsed; 'pass': Node's TLS for good, bytes passed along; 'native': handed off */
  private mode: 'tap' | 'pass' | 'native' = 'tap';
  private tries = 0;
  private relayId = 0;
  private rawEnded = false;
  /**
   * writes of Node's TLS not yet settled: Node's JS stream wrapper reports a write done to
   * the TLS layer in a setImmediate after our callback (and the TLS layer may hold more
   * records until then); a write counts until our own setImmediate, queued after that one
   */
  private inflight = 0;

  /**
   * `counters`: the owner's own counters, counted besides the process-wide ones.
   *
   * The tap does not close by itself (no autoDestroy), not even when the TCP socket closed
   * cleanly: Node's TLS socket reads it through a JSStreamSocket, which destroys the TLS
   * socket, plaintext not yet read included, as soon as the stream under it closes. A slow
   * reader still has records here, or their plaintext in the TLS socket, after the TCP
   * socket got its FIN and sent ours; the TLS socket destroys the tap once it is done.
   */
  constructor(
    readonly raw: Socket,
    private readonly role: Role,
    private readonly counters?: TlsOffloadCounters,
  ) {
    super({ allowHalfOpen: true, autoDestroy: false });
    raw.on('data', (chunk: Buffer) => this.onRaw(chunk));
    raw.on('end', () => {
      this.rawEnded = true;
      if (this.mode === 'native') return;
      this.passPartial();
      this.push(null);
    });
    raw.on('error', (err) => {
      if (this.mode !== 'native') this.destroy(err);
    });
    raw.on('close', () => {
      if (this.mode === 'native') this.stopRelay();
      // cut (not both directions ended): the TLS socket above goes too; a clean close leaves
      // what the tap still holds to be read, and its end
      else if (!this.destroyed && !(this.rawEnded && raw.writableFinished)) this.destroy();
    });
  }

  /** Listen to the TLS socket made on this tap for its traffic secrets (before its handshake). */
  watch(tls: TLSSocket): this {
    this.tls = tls;
    tls.on('keylog', (line: Buffer) => this.onKeylog(line));
    return this;
  }

  /**
   * The handshake is done and checked, and the TLS socket spliced with `plain`: the next
   * application-data record from the peer may move the connection to the native relay.
   */
  arm(opts: ArmOptions): void {
    if (this.mode !== 'tap') return;
    const name = this.tls?.getCipher()?.standardName ?? '';
    if (this.tls?.getProtocol() !== 'TLSv1.3' || !SUITES[name] || SUITES[name] !== this.suite) {
      this.fallback();
      return;
    }
    this.armed = opts;
    opts.plain.once('close', () => {
      if (this.mode === 'native') this.stopRelay();
    });
  }

  /** The owner will not arm this tap: Node's TLS for the rest of the connection. */
  release(): void {
    this.fallback();
  }

  /** true once the connection's records go through the native relay */
  get offloaded(): boolean {
    return this.mode === 'native';
  }

  private onKeylog(line: Buffer): void {
    if (this.mode !== 'tap') return;
    const [label, , hex] = line.toString('latin1').trim().split(' ');
    const mine = this.role === 'server' ? 'SERVER_TRAFFIC_SECRET_0' : 'CLIENT_TRAFFIC_SECRET_0';
    const theirs = this.role === 'server' ? 'CLIENT_TRAFFIC_SECRET_0' : 'SERVER_TRAFFIC_SECRET_0';
    if (label !== mine && label !== theirs) return;
    const secret = Buffer.from(hex ?? '', 'hex');
    const suite = SUITES[this.tls?.getCipher()?.standardName ?? ''] ?? 0;
    if (!suite || secret.length !== (suite === 2 ? 48 : 32) || (this.suite && this.suite !== suite)) {
      this.fallback();
      return;
    }
    this.suite = suite;
    const d = label === mine ? this.wr : this.rd;
    d.secret = secret;
    // records of this direction seen before its secret: the application ones among them are counted
    const early = d.early ?? [];
    d.early = undefined;
    for (const rec of early) this.countApplication(d, rec);
  }

  /**
   * A type-23 record Node wrote (or the peer sent, before the read secret was known):
   * counted when it is an application record. One under the handshake keys after an
   * application record of the same direction is not TLS 1.3: the tap falls back.
   */
  private countApplication(d: Direction, rec: Buffer): Buffer | null {
    const inner = d.open(this.suite, rec);
    if (!inner) {
      // under the handshake keys: only before any application record of this direction
      // (Node writes its last handshake flight after the handshake event, when armed already)
      if (d.seq > 0) this.fallback();
      return null;
    }
    d.seq++;
    return inner;
  }

  private onRaw(chunk: Buffer): void {
    if (this.mode === 'pass') {
      this.passPartial();
      if (!this.push(chunk)) this.raw.pause();
      return;
    }
    if (this.mode === 'native') return;
    const recs: Buffer[] = [];
    this.rd.parser.feed(chunk, recs);
    for (let i = 0; i < recs.length; i++) {
      const rec = recs[i] as Buffer;
      if (this.mode === 'tap' && rec[0] === 23) {
        if (!this.rd.secret) {
          this.rd.early?.push(Buffer.from(rec));
        } else {
          const inner = this.rd.open(this.suite, rec);
          if (!inner) {
            // under the handshake keys, while Node's handshake still runs
            if (this.rd.seq > 0 || this.armed) this.fallback();
          } else {
            const type = inner[inner.length - 1];
            if (type === 23 && this.armed && this.tryHandoff(recs, i)) return;
            if (type === 22 && !onlyTickets(inner)) this.fallback();
            else if (type !== 22 && type !== 23) this.fallback();
            else if (type === 23 && ++this.tries >= MAX_TRIES) this.fallback();
            if (this.mode === 'tap') this.rd.seq++;
          }
        }
      }
      if (!this.push(rec)) this.raw.pause();
    }
    if (this.passing()) this.passPartial();
  }

  /**
   * Passing bytes along: the start of a record the parser held when the tap fell back goes
   * first (a fall-back outside onRaw, from a write or from the owner, leaves it there).
   */
  private passPartial(): void {
    const rest = this.rd.parser.take();
    if (rest && !this.push(rest)) this.raw.pause();
  }

  /**
   * Something is in flight on Node's side or a side is closing: the records the tap has seen
   * are not all there is (plaintext Node decrypted and did not deliver, bytes it was asked to
   * send and did not send, a secret not yet known), so the hand-off waits for a later record.
   */
  private busy(tls: TLSSocket, plain: Socket): boolean {
    const raw = this.raw;
    return (
      this.wr.early !== undefined ||
      this.rd.early !== undefined ||
      this.wr.parser.partial > 0 ||
      this.inflight > 0 ||
      this.readableLength > 0 ||
      raw.readableLength > 0 ||
      tls.readableLength > 0 ||
      tls.writableLength > 0 ||
      this.writableLength > 0 ||
      raw.writableLength > 0 ||
      plain.writableLength > 0 ||
      plain.readableLength > 0 ||
      plain.destroyed ||
      raw.destroyed ||
      tls.destroyed ||
      plain.connecting ||
      plain.readableEnded ||
      plain.writableEnded ||
      tls.writableEnded ||
      tls.readableEnded ||
      this.rawEnded
    );
  }

  /** Everything from recs[i] on goes to the native relay, if nothing is in flight on Node's side. */
  private tryHandoff(recs: Buffer[], i: number): boolean {
    const tls = this.tls as TLSSocket;
    const plain = (this.armed as ArmOptions).plain;
    const raw = this.raw;
    const rawFd = handleOf(raw)?.fd ?? -1;
    const plainFd = handleOf(plain)?.fd ?? -1;
    let pendingLen = this.rd.parser.partial;
    for (let j = i; j < recs.length; j++) pendingLen += (recs[j] as Buffer).length;
    if (pendingLen > MAX_PENDING || rawFd < 0 || plainFd < 0 || this.busy(tls, plain)) return false;
    const opts = this.armed as ArmOptions;
    if (!canStopReading(raw) || !canStopReading(plain)) {
      this.fallback();
      return false;
    }
    if (!opts.detach()) return false;
    const parts = recs.slice(i);
    const tail = this.rd.parser.take();
    if (tail) parts.push(tail);
    this.mode = 'native';
    this.count('handoffs');
    let id: number | string;
    const readSecret = this.rd.secret;
    const writeSecret = this.wr.secret;
    if (!stopReading(raw) || !stopReading(plain)) {
      // Node's reads could not be stopped: the relay would race them; both connections go
      id = 'read-stop';
    } else if (!readSecret || !writeSecret) {
      id = 'start';
    } else {
      raw.pause();
      plain.pause();
      try {
        id = native().tlsRelayStart(
          rawFd,
          plainFd,
          this.suite,
          readSecret,
          this.rd.seq,
          writeSecret,
          this.wr.seq,
          Buffer.concat(parts),
          (_id: number, reason: string) => this.relayEnded(reason),
        );
      } catch {
        id = 'start';
      }
    }
    this.forget();
    if (typeof id === 'string') {
      this.relayEnded(id);
      return true;
    }
    this.relayId = id;
    return true;
  }

  private relayEnded(reason: string): void {
    this.relayId = 0;
    const plain = this.armed?.plain;
    if (reason === 'end') {
      this.count('ended');
      this.raw.destroy();
      plain?.destroy();
    } else {
      this.count('failed');
      resetSocket(this.raw);
      if (plain) resetSocket(plain);
    }
    this.tls?.destroy();
    this.armed?.onEnd?.(reason);
  }

  /** the TCP socket or the plaintext socket was closed under a running relay */
  private stopRelay(): void {
    if (!this.relayId) return;
    native().tlsRelayStop(this.relayId);
    this.relayId = 0;
    this.count('failed');
    resetSocket(this.raw);
    const plain = this.armed?.plain;
    if (plain) resetSocket(plain);
    this.tls?.destroy();
    this.armed?.onEnd?.('stopped');
  }

  /** the secrets stay in no JS object longer than needed */
  private forget(): void {
    for (const d of [this.rd, this.wr]) {
      d.secret?.fill(0);
      d.keyIv?.fill(0);
      d.secret = undefined;
      d.keyIv = undefined;
    }
  }

  private count(k: keyof TlsOffloadCounters): void {
    tlsOffloadCounters[k]++;
    if (this.counters) this.counters[k]++;
  }

  private passing(): boolean {
    return this.mode === 'pass';
  }

  /** Node's TLS for the rest of the connection */
  private fallback(): void {
    if (this.mode !== 'tap') return;
    this.mode = 'pass';
    this.count('fallbacks');
    this.forget();
    this.rd.early = undefined;
    this.wr.early = undefined;
    this.wr.parser.take();
  }

  override _read(): void {
    if (this.mode !== 'native' && this.raw.isPaused()) this.raw.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.mode === 'native') {
      // Node's TLS must not write after the hand-off (its sequence numbers are behind)
      cb();
      return;
    }
    if (this.mode === 'tap') {
      const recs: Buffer[] = [];
      this.wr.parser.feed(chunk, recs);
      for (const rec of recs) {
        if (rec[0] !== 23) continue;
        if (!this.wr.secret) this.wr.early?.push(Buffer.from(rec));
        else this.countApplication(this.wr, rec);
        if (this.mode !== 'tap') break;
      }
    }
    this.inflight++;
    this.raw.write(chunk, (err) => {
      cb(err);
      // without autoDestroy a failed write would leave the tap open: it goes, and the TLS socket with it
      if (err && !this.destroyed) this.destroy(err);
      setImmediate(settle, this);
    });
  }

  /** @internal */
  settled(): void {
    this.inflight--;
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.mode !== 'native') this.raw.end();
    cb();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (this.mode !== 'native') this.raw.destroy();
    cb(err);
  }
}

function settle(tap: TlsTap): void {
  tap.settled();
}

/** a handshake record's messages are all whole NewSessionTickets (inner: content ‖ type) */
function onlyTickets(inner: Buffer): boolean {
  let p = 0;
  const n = inner.length - 1;
  while (p < n) {
    if (n - p < 4 || inner[p] !== 4) return false;
    const len = inner.readUIntBE(p + 1, 3);
    if (len > n - p - 4) return false;
    p += 4 + len;
  }
  return n > 0;
}

/** Abort a TCP connection with RST (SO_LINGER 0), falling back to destroy(). */
function resetSocket(sock: Socket): void {
  if (sock.destroyed) return;
  try {
    sock.resetAndDestroy();
  } catch {
    sock.destroy();
  }
}
