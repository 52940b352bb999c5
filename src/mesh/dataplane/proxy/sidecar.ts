// The sidecar proxy. Inbound: sniff the first bytes of each connection and enforce the
// effective PeerAuthentication mode of the application port (STRICT resets plaintext
// with RST before a byte reaches the application; TLS must carry a client certificate
// of the mesh CA whose one SPIFFE ID is in the mesh's trust domain). Outbound: originate
// mTLS with the workload certificate and check the server's SPIFFE ID (the policy's, or
// any of the trust domain) (ISTIO_MUTUAL), or pass plaintext (DISABLE). The configuration is a
// plain object swapped at runtime by update(); open connections keep going.
import { connect as netConnect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { TLSSocket, connect as tlsConnect, type ConnectionOptions, type SecureContext } from 'node:tls';
import { listenServer } from '../../../base/net/index.js';
import { validateSidecarConfig, type InboundMode, type OutboundPolicy, type SidecarConfig } from './config.js';
import { MESH_ALPN, meshPeerIdentity, secureContextFor, spiffeChecker, trustDomainOf } from './identity.js';
import { classifyTlsError, ProxyMetrics } from './metrics.js';
import { DEFAULT_FLOW_LIMIT, FlowTable, type FlowOutcome, type FlowTls } from './flows.js';
import { decode as decodeHello, MAX_RECORD } from '../../wire/tls-hello/index.js';
import { sniffTls } from './sniff.js';
import { connectSpliced, resetSocket, splice, unsplice, type Connector } from './splice.js';
import { TlsTap, tlsOffloadAvailable } from '../../../platform/native/index.js';

export interface Address {
  host: string;
  port: number;
}

/** Where a connection was headed before it was redirected to the proxy. */
export type OriginalDst = (sock: Socket) => Address;

export interface InboundListenOptions {
  host: string;
  port: number;
  /** a listening socket made elsewhere (a pod's namespace); host and port then only name it */
  fd?: number;
  /** the application: a fixed address, or the original destination of each redirected connection */
  app: Address | 'original-dst';
  /** how long to wait for the first bytes before deciding (default 5000 ms) */
  sniffTimeoutMs?: number;
}

export interface OutboundListenOptions {
  host: string;
  port: number;
  /** a listening socket made elsewhere (a pod's namespace); host and port then only name it */
  fd?: number;
  /** where the client meant to go: a fixed address (loopback tests) or the original destination */
  destination: Address | 'original-dst';
}

export interface SidecarOptions {
  originalDst?: OriginalDst;
  /** called for every connection decision (logging, tests) */
  onEvent?: (ev: ProxyEvent) => void;
  /** most inbound flows kept in `flows` (default 256; the one seen longest ago is evicted) */
  flowLimit?: number;
  /**
   * how upstream connections (to the app, to destinations) are opened: net.connect by
   * default; the node-level proxy opens them inside the pod's namespace
   */
  connect?: Connector;
  /**
   * move mTLS connections' application-data records to the native relay after the handshake
   * (TLS 1.3 AES-GCM; platform/native/tls-relay.ts); default: when the C addon loads
   */
  tlsOffload?: boolean;
}

export type ProxyEvent =
  /** peer: the client's SPIFFE ID (mtls) */
  | { type: 'inbound-accepted'; port: number; mode: InboundMode; how: 'plaintext' | 'mtls' | 'tls-passthrough'; peer?: string }
  | { type: 'inbound-reset'; port: number; mode: InboundMode; reason: string }
  | { type: 'handshake-failed'; side: 'server' | 'client'; reason: string; error: string }
  | { type: 'outbound'; destination: string; mode: string };

interface Listener {
  server: Server;
  kind: 'inbound' | 'outbound';
}

interface InboundConn {
  proxy: SidecarProxy;
  sock: Socket;
  app: Address | 'original-dst';
  port: number;
  target: Address | undefined;
  timer: NodeJS.Timeout | undefined;
  head: Buffer | undefined;
  /** the ClientHello offered an istio ALPN protocol (a mesh client) */
  meshAlpn: boolean;
  /** the client's address, read once at accept (a reset socket no longer knows it) */
  address: string;
}

const kConn = Symbol('strait.inboundConn');
/** destinations whose last TLS session is kept for resumption */
const MAX_SESSIONS = 1024;
type SockWithConn = Socket & { [kConn]?: InboundConn };

export class SidecarProxy {
  readonly metrics = new ProxyMetrics();
  /** the inbound flows seen (client → port, TLS kind, outcome), bounded */
  readonly flows: FlowTable;
  private cfg: Readonly<SidecarConfig>;
  private ctx: SecureContext | undefined;
  /** the mesh's trust domain: the one of the workload certificate's SPIFFE ID */
  private trustDomain = '';
  private readonly checkers = new Map<string, ReturnType<typeof spiffeChecker>>();
  /** TLS sessions toward each destination ("ip:port"), resumed by the next connection there */
  private readonly sessions = new Map<string, Buffer>();
  private readonly listeners: Listener[] = [];
  private readonly open = new Set<Socket>();
  private readonly connector: Connector;
  private readonly offload: boolean;
  /** set when the configuration last changed (performance.now()) */
  lastUpdate = 0;

  constructor(
    config: unknown,
    private readonly opts: SidecarOptions = {},
  ) {
    this.cfg = validateSidecarConfig(config);
    this.flows = new FlowTable(opts.flowLimit ?? DEFAULT_FLOW_LIMIT);
    this.connector = opts.connect ?? netConnect;
    this.offload = opts.tlsOffload ?? tlsOffloadAvailable();
    this.applyIdentity(undefined);
  }

  get config(): Readonly<SidecarConfig> {
    return this.cfg;
  }

  /** Swap the configuration; the next connection sees it. Invalid input throws and keeps the old one. */
  update(raw: unknown): void {
    const next = validateSidecarConfig(raw);
    const prev = this.cfg;
    this.cfg = next;
    this.applyIdentity(prev);
    this.checkers.clear();
    // a session proves only what was checked when it was made: new policy, new handshakes
    this.sessions.clear();
    this.metrics.configUpdates++;
    this.lastUpdate = performance.now();
  }

  private applyIdentity(prev: Readonly<SidecarConfig> | undefined): void {
    const id = this.cfg.identity;
    if (prev && prev.identity?.certPem === id?.certPem && prev.identity?.keyPem === id?.keyPem && prev.identity?.rootPem === id?.rootPem) return;
    // New connections use the new context; established TLS sessions keep theirs.
    this.ctx = id ? secureContextFor(id) : undefined;
    const td = id ? trustDomainOf(id.certPem) : '';
    this.trustDomain = typeof td === 'string' ? td : '';
    this.metrics.setCertificate(id?.certPem);
  }

  inboundMode(port: number): InboundMode {
    return this.cfg.inbound.ports?.[String(port)] ?? this.cfg.inbound.defaultMode;
  }

  outboundPolicy(host: string, port: number): OutboundPolicy {
    return this.cfg.outbound.destinations?.[`${host}:${port}`] ?? this.cfg.outbound.default;
  }

  private checkerFor(policy: OutboundPolicy): ReturnType<typeof spiffeChecker> {
    const key = (policy.sans ?? []).join('\n');
    let c = this.checkers.get(key);
    if (!c) {
      c = spiffeChecker(policy.sans, this.trustDomain);
      this.checkers.set(key, c);
    }
    return c;
  }

  private originalDst(sock: Socket): Address {
    if (!this.opts.originalDst) throw new Error('no original-destination lookup configured for this proxy');
    return this.opts.originalDst(sock);
  }

  async listenInbound(o: InboundListenOptions): Promise<AddressInfo> {
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: false }, (sock) => this.onInbound(sock, o));
    return this.listen(server, 'inbound', o);
  }

  async listenOutbound(o: OutboundListenOptions): Promise<AddressInfo> {
    const server = createServer({ allowHalfOpen: true }, (sock) => this.onOutbound(sock, o.destination));
    return this.listen(server, 'outbound', o);
  }

  private async listen(server: Server, kind: 'inbound' | 'outbound', o: { host: string; port: number; fd?: number }): Promise<AddressInfo> {
    const bound = await listenServer(server, o.fd !== undefined ? { fd: o.fd } : { port: o.port, host: o.host });
    this.listeners.push({ server, kind });
    return bound.address as AddressInfo;
  }

  private track(sock: Socket): void {
    this.open.add(sock);
    sock.once('close', () => this.open.delete(sock));
  }

  // --- inbound -------------------------------------------------------------------

  private onInbound(sock: Socket, o: InboundListenOptions): void {
    this.track(sock);
    sock.on('error', ignoreError);
    let target: Address | undefined;
    if (o.app === 'original-dst') {
      try {
        target = this.originalDst(sock);
      } catch {
        resetSocket(sock);
        return;
      }
      if (isSelf(sock, target)) {
        this.metrics.directToProxy.inbound++;
        resetSocket(sock);
        return;
      }
    } else {
      target = o.app;
    }
    const conn: InboundConn = {
      proxy: this,
      sock,
      app: o.app,
      port: target.port,
      target,
      timer: undefined,
      head: undefined,
      meshAlpn: false,
      address: sock.remoteAddress ?? '',
    };
    (sock as SockWithConn)[kConn] = conn;
    conn.timer = setTimeout(onSniffTimeout, o.sniffTimeoutMs ?? 5000, conn);
    sock.on('data', onFirstData);
    sock.on('error', onEarlyError);
  }

  /** Decide what to do with an inbound connection once its first bytes are known. */
  decideInbound(conn: InboundConn, kind: number): void {
    const { sock, port } = conn;
    const mode = this.inboundMode(port);
    const ev = this.opts.onEvent;
    if (kind === 1) {
      if (mode === 'DISABLE' || (mode === 'PERMISSIVE' && !conn.meshAlpn)) {
        // As Envoy: DISABLE has only a plaintext chain, and PERMISSIVE sends TLS that does not
        // offer an istio ALPN protocol (the application's own TLS) to the app untouched.
        this.metrics.accepted[mode]['tls-passthrough']++;
        this.observeInbound(conn, 'tls-passthrough', 'accepted', '', mode, undefined);
        ev?.({ type: 'inbound-accepted', port, mode, how: 'tls-passthrough' });
        this.toApp(conn, sock, undefined);
        return;
      }
      if (!this.ctx) {
        this.metrics.reset[mode]['no-identity']++;
        this.observeInbound(conn, 'tls', 'reset', 'no-identity', mode, undefined);
        ev?.({ type: 'inbound-reset', port, mode, reason: 'no-identity' });
        resetSocket(sock);
        return;
      }
      this.terminateTls(conn, mode);
      return;
    }
    // plaintext (or silence until the sniff timeout)
    if (mode === 'STRICT') {
      const reason = kind === 0 ? 'plaintext' : 'sniff-timeout';
      this.metrics.reset.STRICT[reason]++;
      this.observeInbound(conn, 'plaintext', 'reset', reason, mode, undefined);
      ev?.({ type: 'inbound-reset', port, mode, reason });
      resetSocket(sock);
      return;
    }
    this.metrics.accepted[mode].plaintext++;
    this.observeInbound(conn, 'plaintext', 'accepted', '', mode, undefined);
    ev?.({ type: 'inbound-accepted', port, mode, how: 'plaintext' });
    this.toApp(conn, sock, undefined);
  }

  /**
   * The one place where an inbound connection's verdict is recorded as a flow (every proxy
   * built on this connection path records through it).
   */
  private observeInbound(conn: InboundConn, tls: FlowTls, outcome: FlowOutcome, reason: string, mode: InboundMode, peer: string | undefined): void {
    this.flows.record(conn.address, peer, conn.port, tls, outcome, reason, mode);
  }

  private terminateTls(conn: InboundConn, mode: InboundMode): void {
    const raw = conn.sock;
    // under Node's TLS socket: the tap that can hand its records to the native relay later
    const tap = this.offload ? new TlsTap(raw, 'server', this.metrics.tlsRelay) : undefined;
    const tlsSock = new TLSSocket(tap ?? raw, {
      isServer: true,
      secureContext: this.ctx as SecureContext,
      requestCert: true,
      rejectUnauthorized: true,
      // no ALPNProtocols here: a server list would refuse clients that offer only h2/http/1.1
    });
    tap?.watch(tlsSock);
    const onErr = (err: Error): void => {
      const reason = classifyTlsError(err);
      this.metrics.handshakeFailures.server[reason]++;
      this.observeInbound(conn, 'tls', 'reset', reason, mode, undefined);
      this.opts.onEvent?.({ type: 'handshake-failed', side: 'server', reason, error: err.message });
      resetSocket(raw);
    };
    tlsSock.once('error', onErr);
    tlsSock.once('secure', () => {
      tlsSock.off('error', onErr);
      // the peer's certificate as an X509Certificate: getPeerCertificate() builds every field
      // (fingerprints, key, raw) and was ~8 % of an inbound connection's CPU; the SANs are all this needs
      const cert = tlsSock.getPeerX509Certificate();
      const verifyError = clientVerifyError(tlsSock, cert !== undefined);
      if (verifyError) {
        onErr(verifyError);
        return;
      }
      // signed by the mesh CA is not enough: the client must be a workload of this mesh
      const peer = meshPeerIdentity({ subjectaltname: cert?.subjectAltName }, this.trustDomain);
      if (typeof peer !== 'string') {
        onErr(peer);
        return;
      }
      this.metrics.handshakes.serverOk++;
      if (tlsSock.isSessionReused()) this.metrics.handshakes.serverResumed++;
      this.metrics.accepted[mode].mtls++;
      this.metrics.countPrincipal(peer);
      this.observeInbound(conn, 'mtls', 'accepted', '', mode, peer);
      this.opts.onEvent?.({ type: 'inbound-accepted', port: conn.port, mode, how: 'mtls', peer });
      const up = this.toApp(conn, tlsSock, raw);
      tap?.arm({ plain: up, detach: () => detach(tlsSock, up) });
    });
  }

  private toApp(conn: InboundConn, down: Socket, downRaw: Socket | undefined): Socket {
    const target = conn.target as Address;
    const up = connectSpliced({ host: target.host, port: target.port, allowHalfOpen: true }, this.connector);
    this.track(up);
    up.once('error', () => {
      this.metrics.upstreamErrors.inbound++;
    });
    splice(down, up, downRaw, undefined);
    down.resume();
    return up;
  }

  // --- outbound ------------------------------------------------------------------

  private onOutbound(down: Socket, destination: Address | 'original-dst'): void {
    this.track(down);
    down.on('error', ignoreError);
    let dst: Address;
    try {
      dst = destination === 'original-dst' ? this.originalDst(down) : destination;
    } catch {
      resetSocket(down);
      return;
    }
    if (destination === 'original-dst' && isSelf(down, dst)) {
      this.metrics.directToProxy.outbound++;
      resetSocket(down);
      return;
    }
    const policy = this.outboundPolicy(dst.host, dst.port);
    this.metrics.outbound[policy.mode]++;
    this.opts.onEvent?.({ type: 'outbound', destination: `${dst.host}:${dst.port}`, mode: policy.mode });
    const plain = policy.mode === 'DISABLE' || !this.ctx;
    // a plaintext upstream reads through onread (connectSpliced); under TLS the TLS layer reads it
    const raw = plain
      ? connectSpliced({ host: dst.host, port: dst.port, allowHalfOpen: true }, this.connector)
      : this.connector({ host: dst.host, port: dst.port, allowHalfOpen: true });
    this.track(raw);
    raw.on('error', ignoreError);
    if (plain) {
      if (policy.mode !== 'DISABLE') {
        // ISTIO_MUTUAL without an identity cannot work; fail the connection visibly.
        this.metrics.handshakeFailures.client.other++;
        resetSocket(raw);
        resetSocket(down);
        return;
      }
      raw.once('error', () => {
        this.metrics.upstreamErrors.outbound++;
      });
      splice(down, raw);
      return;
    }
    const key = `${dst.host}:${dst.port}`;
    const session = this.sessions.get(key);
    const tap = this.offload ? new TlsTap(raw, 'client', this.metrics.tlsRelay) : undefined;
    const up = tlsConnect({
      socket: tap ?? raw,
      secureContext: this.ctx,
      ...(session ? { session } : {}),
      ALPNProtocols: MESH_ALPN,
      rejectUnauthorized: true,
      checkServerIdentity: this.checkerFor(policy),
    } as ConnectionOptions);
    tap?.watch(up);
    down.pause();
    const onErr = (err: Error): void => {
      const reason = classifyTlsError(err);
      this.metrics.handshakeFailures.client[reason]++;
      this.opts.onEvent?.({ type: 'handshake-failed', side: 'client', reason, error: err.message });
      resetSocket(raw);
      resetSocket(down);
    };
    up.once('error', onErr);
    const ctx = this.ctx;
    up.on('session', (s: Buffer) => {
      // only a session made under the identity still in use (the context may have rotated)
      if (this.ctx !== ctx) return;
      if (this.sessions.size >= MAX_SESSIONS && !this.sessions.has(key)) this.sessions.delete(this.sessions.keys().next().value as string);
      this.sessions.set(key, s);
    });
    up.once('secureConnect', () => {
      up.off('error', onErr);
      this.metrics.handshakes.clientOk++;
      if (up.isSessionReused()) this.metrics.handshakes.clientResumed++;
      splice(down, up, undefined, raw);
      down.resume();
      tap?.arm({ plain: down, detach: () => detach(down, up) });
    });
  }

  /** Stop listening; with `destroyOpen`, also cut open connections. */
  async close(destroyOpen = true): Promise<void> {
    const closing = this.listeners.splice(0).map((l) => new Promise<void>((r) => l.server.close(() => r())));
    if (destroyOpen) for (const s of this.open) s.destroy();
    await Promise.all(closing);
  }

  /** Number of open sockets (both directions, both sides). */
  openSockets(): number {
    return this.open.size;
  }
}

/**
 * The verdict of OpenSSL's chain check of the client certificate. A TLSSocket made with
 * isServer outside a tls.Server does not set `authorized`; read the same verdict that
 * tls.Server reads (the TLSWrap's verifyError), and refuse when it cannot be read.
 */
function clientVerifyError(sock: TLSSocket, hasCert: boolean): Error | undefined {
  const handle = (sock as unknown as { _handle?: { verifyError?: () => Error | null } })._handle;
  if (typeof handle?.verifyError !== 'function') return new Error('cannot read the verification result of the client certificate');
  const err = handle.verifyError();
  if (err) return err;
  if (!hasCert) return Object.assign(new Error('peer did not return a certificate'), { code: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE' });
  return undefined;
}

/**
 * A connection made straight to the proxy's listener (not redirected to it) has the
 * listener itself as its original destination; relayed, it would connect to the same
 * listener again, and again, until the process runs out of descriptors.
 */
function isSelf(sock: Socket, dst: Address): boolean {
  return dst.port === sock.localPort && dst.host === sock.localAddress;
}

/** The native relay takes a spliced pair over: JS stops moving their data. */
function detach(a: Socket, b: Socket): boolean {
  unsplice(a, b);
  return true;
}

/** Errors are handled where the connection is joined; this keeps a stray one from crashing the proxy. */
function ignoreError(): void {}

// Module-level handlers of the sniffing phase: state is found through the socket's kConn field.

function onFirstData(this: SockWithConn, chunk: Buffer): void {
  const conn = this[kConn];
  if (!conn) return;
  const head = conn.head ? Buffer.concat([conn.head, chunk]) : chunk; // only until the first record is complete
  const kind = sniffTls(head);
  if (kind === -1) {
    conn.head = head;
    return;
  }
  if (kind === 1) {
    const hello = decodeHello(head);
    if (hello.status === 'need-more' && head.length < MAX_RECORD) {
      conn.head = head;
      return;
    }
    conn.meshAlpn = hello.alpn.some(isMeshAlpn);
  }
  finishSniff(this, conn, head, kind);
}

function isMeshAlpn(p: string): boolean {
  return p.startsWith('istio');
}

function onSniffTimeout(conn: InboundConn): void {
  conn.timer = undefined;
  finishSniff(conn.sock as SockWithConn, conn, conn.head, 2);
}

function onEarlyError(this: SockWithConn): void {
  const conn = this[kConn];
  if (conn?.timer) clearTimeout(conn.timer);
  this.destroy();
}

function finishSniff(sock: SockWithConn, conn: InboundConn, head: Buffer | undefined, kind: number): void {
  if (conn.timer) clearTimeout(conn.timer);
  conn.timer = undefined;
  sock.off('data', onFirstData);
  sock.off('error', onEarlyError);
  sock.pause();
  if (head && head.length > 0) sock.unshift(head);
  sock[kConn] = undefined;
  conn.head = undefined;
  if (sock.destroyed) return;
  conn.proxy.decideInbound(conn, kind);
}
