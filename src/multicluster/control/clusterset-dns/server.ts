// The clusterset.local DNS server: UDP and TCP on one port, dns2 for the message codec.
// UDP on an IPv4 address goes through the tunnel's batched transport (strait's C addon:
// one read takes a run of queries (GRO), answers to one client leave together at the end
// of the event-loop turn (GSO)); node:dgram where the addon is missing, on IPv6, or with
// STRAIT_UDP=dgram.
// Names in clusterset.local are answered from the zone; other names are forwarded to the
// cluster's own DNS (the upstream). Malformed packets are counted and dropped (or answered
// FORMERR when the header is readable); each source address has a query rate bound.
// Forwarded queries carry a random ID (crypto), go out on a socket connected to the
// upstream, and a reply is taken only from the upstream's address and port, with the ID
// of a pending query and that query's question; anything else is counted and ignored.
import { randomFillSync } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { createServer as createTcpServer, type Server as TcpServer, type Socket as TcpSocket } from 'node:net';
import { Packet } from 'dns2';
import type { Registry } from 'prom-client';
import { type Logger, silentLogger } from '../../../base/log/index.js';
import { listenServer } from '../../../base/net/index.js';
import { ipv4ToInt } from '../../../base/config/index.js';
import { UdpTransport } from '../../dataplane/udp/index.js';
import { DnsCounters, registerDnsMetrics } from './metrics.js';
import { readQuery, sameQuestion, type Query } from '../../wire/dns-query/index.js';
import { RateLimiter } from './rate-limit.js';
import { type Answer, ClustersetZone, type Rr } from './zone.js';

export interface ClustersetDnsOptions {
  zone: ClustersetZone;
  /** listen address (default 127.0.0.1) */
  address?: string;
  /** listen port for UDP and TCP (default 53; 0 picks a free one) */
  port?: number;
  tcp?: boolean;
  /** the cluster's own DNS, for names outside clusterset.local; without it they get REFUSED */
  upstream?: { address: string; port: number; timeoutMs?: number };
  /** per-source bound (default 10000 queries/s, burst 20000) */
  rateLimit?: { qps: number; burst: number };
  registry?: Registry;
  log?: Logger;
}

export interface ClustersetDns {
  readonly address: string;
  readonly port: number;
  readonly counters: DnsCounters;
  /** true when UDP goes through the addon's batched transport (false: node:dgram) */
  readonly udpBatched: boolean;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const TYPE_NUM: Record<Rr['type'], number> = { A: 1, SRV: 33, SOA: 6 };
const MAX_PENDING = 4096;
/** destinations whose answers are grouped by size in one event-loop turn */
const MAX_REPLY_GROUPS = 32;

/** Where an answer goes: a UDP peer, or a TCP connection (length-prefixed). */
type Target = UdpTarget | TcpTarget;

interface UdpTarget {
  address: string;
  port: number;
}

/** The UDP side: the batched transport, or a dgram socket (IPv6, a host name, no addon). */
interface UdpSide {
  readonly port: number;
  /** true on the addon's batched transport */
  readonly batched: boolean;
  send(buf: Buffer, port: number, address: string): void;
  close(): Promise<void>;
}

async function bindUdp(address: string, port: number, onMessage: (msg: Buffer, address: string, port: number) => void, log: Logger): Promise<UdpSide> {
  if (ipv4ToInt(address) !== undefined) {
    const t = await UdpTransport.bind(address, port, onMessage, { bufferBytes: 4 * 1024 * 1024 });
    if (!t.batched) return { port: t.port, batched: false, send: (buf, p, a) => t.send(buf, p, a), close: () => t.close() };
    // answers to one client are held to the end of the turn and handed over by size: the
    // transport sends a run of equal-sized datagrams to one address in one GSO write. The
    // order among one client's answers may change (each carries its query's ID)
    // (a few groups a turn: searched in an array, emptied in place; no per-answer key string)
    const held: { address: string; port: number; len: number; bufs: Buffer[] }[] = [];
    let groups = 0;
    let scheduled = false;
    const flush = (): void => {
      scheduled = false;
      for (let i = 0; i < groups; i++) {
        const g = held[i]!;
        for (let j = 0; j < g.bufs.length; j++) t.send(g.bufs[j]!, g.port, g.address);
        g.bufs.length = 0;
      }
      groups = 0;
      t.flush();
    };
    return {
      port: t.port,
      batched: true,
      send(buf, p, a) {
        let g: (typeof held)[number] | undefined;
        for (let i = 0; i < groups; i++) {
          const h = held[i]!;
          if (h.port === p && h.len === buf.length && h.address === a) {
            g = h;
            break;
          }
        }
        if (!g) {
          // many clients in one turn: the rest go to the transport as they come (no quadratic search)
          if (groups === MAX_REPLY_GROUPS) {
            t.send(buf, p, a);
            return;
          }
          if (groups === held.length) held.push({ address: a, port: p, len: buf.length, bufs: [] });
          g = held[groups++]!;
          g.address = a;
          g.port = p;
          g.len = buf.length;
        }
        g.bufs.push(buf);
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      },
      close: () => {
        flush();
        return t.close();
      },
    };
  }
  const udp = createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
  await new Promise<void>((res, rej) => {
    udp.once('error', rej);
    udp.bind(port, address, () => {
      udp.off('error', rej);
      res();
    });
  });
  udp.on('message', (msg: Buffer, rinfo: RemoteInfo) => onMessage(msg, rinfo.address, rinfo.port));
  udp.on('error', (err) => log.warn({ err }, 'dns udp socket error'));
  return {
    port: udp.address().port,
    batched: false,
    send: (buf, p, a) => udp.send(buf, p, a),
    close: () => new Promise<void>((r) => udp.close(() => r())),
  };
}

interface TcpTarget {
  socket: TcpSocket;
}

/** What an answer depends on: the question, and the EDNS payload size (0 without OPT). */
type Question = Pick<Query, 'qname' | 'qtype' | 'qclass' | 'edns'>;

interface Pending {
  id: number;
  qtype: number;
  target: Target;
  request: Buffer;
  timer: NodeJS.Timeout;
}

/** A FORMERR/NOTIMP/SERVFAIL/REFUSED answer built from the raw header (and question when present). */
function errorReply(req: Buffer, rcode: number): Buffer | undefined {
  if (req.length < 12) return undefined;
  const qd = req.readUInt16BE(4);
  // keep the question only when it is one well-formed question
  let qEnd = 12;
  if (qd === 1) {
    let o = 12;
    while (o < req.length && req[o] !== 0 && o - 12 < 255) o += 1 + req[o]!;
    qEnd = o + 5 <= req.length && req[o] === 0 ? o + 5 : 12;
  }
  const out = Buffer.alloc(qEnd);
  req.copy(out, 0, 0, qEnd);
  out[2] = 0x80 | (req[2]! & 0x79); // QR, opcode, RD
  out[3] = 0x80 | (rcode & 0x0f); // RA
  out.writeUInt16BE(qEnd > 12 ? 1 : 0, 4);
  out.writeUInt32BE(0, 6);
  out.writeUInt16BE(0, 10);
  return out;
}

function cacheKey(qname: string, qtype: number, qclass: number, edns: boolean, limit: number, a: Answer): string {
  let k = `${qname}|${qtype}|${qclass}|${edns ? 1 : 0}|${limit}|${a.rcode}|`;
  for (let i = 0; i < a.answers.length; i++) {
    const r = a.answers[i]!;
    k += `${r.address ?? ''}/${r.port ?? ''}/${r.target ?? ''},`;
  }
  k += '|';
  for (let i = 0; i < a.additionals.length; i++) k += `${a.additionals[i]!.name}/${a.additionals[i]!.address ?? ''},`;
  return k;
}

function toResource(r: Rr): Record<string, unknown> {
  const base = { name: r.name, type: TYPE_NUM[r.type], class: 1, ttl: r.ttl };
  if (r.type === 'A') return { ...base, address: r.address };
  if (r.type === 'SRV') return { ...base, priority: r.priority, weight: r.weight, port: r.port, target: r.target };
  return { ...r, ...base };
}

export class ClustersetDnsServer implements ClustersetDns {
  readonly counters = new DnsCounters();
  address = '127.0.0.1';
  port = 0;
  private udp: UdpSide | undefined;
  private tcp: TcpServer | undefined;
  private upstreamSock: Socket | undefined;
  /** the upstream's address as the socket reports a sender's (normalised) */
  private upstreamAddress = '';
  private pending = new Map<number, Pending>();
  /** random query IDs, drawn from the CSPRNG in batches */
  private readonly ids = new Uint16Array(256);
  private idsLeft = 0;
  private readonly limiter: RateLimiter;
  private readonly log: Logger;
  private tcpConns = new Set<TcpSocket>();
  private cache = new Map<string, Buffer>();
  private stable = new Map<string, { buf: Buffer; rcode: number; version: string }>();
  private cacheGeneration = -1;

  constructor(private readonly opts: ClustersetDnsOptions) {
    this.limiter = new RateLimiter(opts.rateLimit?.qps ?? 10_000, opts.rateLimit?.burst ?? 20_000);
    this.log = opts.log ?? silentLogger();
    if (opts.registry) registerDnsMetrics(opts.registry, this.counters);
    this.onUdpMessage = this.onUdpMessage.bind(this);
    this.onUpstreamMessage = this.onUpstreamMessage.bind(this);
  }

  get udpBatched(): boolean {
    return this.udp?.batched ?? false;
  }

  async listen(): Promise<void> {
    const address = this.opts.address ?? '127.0.0.1';
    const wantTcp = this.opts.tcp ?? true;
    for (let attempt = 0; ; attempt++) {
      const udp = await bindUdp(address, this.opts.port ?? 53, this.onUdpMessage, this.log);
      const port = udp.port;
      if (!wantTcp) {
        this.udp = udp;
        this.port = port;
        break;
      }
      try {
        const tcp = createTcpServer({ pauseOnConnect: false }, (s) => this.onTcpConnection(s));
        await listenServer(tcp, { port, host: address });
        tcp.maxConnections = 256;
        this.udp = udp;
        this.tcp = tcp;
        this.port = port;
        break;
      } catch (err) {
        await udp.close();
        if ((this.opts.port ?? 53) !== 0 || attempt > 10) throw err;
      }
    }
    this.address = address;
    if (this.opts.upstream) {
      const up = createSocket({ type: this.opts.upstream.address.includes(':') ? 'udp6' : 'udp4' });
      up.on('message', this.onUpstreamMessage);
      up.on('error', (err) => this.log.warn({ err }, 'dns upstream socket error'));
      await new Promise<void>((res) => up.bind(0, res));
      // connected: the kernel already drops datagrams from any other address or port
      const { address: ua, port: upPort } = this.opts.upstream;
      await new Promise<void>((res, rej) => {
        up.once('error', rej);
        up.connect(upPort, ua, () => {
          up.off('error', rej);
          res();
        });
      });
      this.upstreamAddress = up.remoteAddress().address;
      this.upstreamSock = up;
    }
  }

  /** a query over UDP: `msg` may be the transport's shared buffer, read before this returns */
  private onUdpMessage(msg: Buffer, address: string, port: number): void {
    if (!this.limiter.allow(address, performance.now())) {
      this.counters.rateLimited++;
      return;
    }
    this.handle(msg, 512, { address, port });
  }

  private onTcpConnection(s: TcpSocket): void {
    this.tcpConns.add(s);
    s.setTimeout(10_000, () => s.destroy());
    s.on('close', () => this.tcpConns.delete(s));
    s.on('error', () => s.destroy());
    let buf: Buffer = Buffer.alloc(0);
    const target: TcpTarget = { socket: s };
    s.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      while (buf.length >= 2) {
        const n = buf.readUInt16BE(0);
        if (buf.length < 2 + n) break;
        const msg = buf.subarray(2, 2 + n);
        buf = buf.subarray(2 + n);
        if (!this.limiter.allow(s.remoteAddress ?? '?', performance.now())) {
          this.counters.rateLimited++;
          continue;
        }
        this.handle(msg, 65535, target);
      }
      if (buf.length > 70_000) s.destroy();
    });
  }

  /** One query in, at most one answer out. Never throws. */
  private handle(msg: Buffer, udpLimit: number, target: Target): void {
    if (!this.acceptHeader(msg, target)) return;
    const q = readQuery(msg) ?? this.parseQuestion(msg, target);
    if (!q) return;
    if (!ClustersetZone.inZone(q.qname.toLowerCase())) {
      this.forward(msg, q.qtype, target);
      return;
    }
    this.answer(msg, q, udpLimit, target);
  }

  /** Whether the header is a standard query the codec may see; anything else is counted (and answered when it can be). */
  private acceptHeader(msg: Buffer, target: Target): boolean {
    if (msg.length < 12 || msg.length > 65535) {
      this.counters.malformed++;
      return false;
    }
    if (msg[2]! & 0x80) {
      // a response: never answer it (no reflection loops)
      this.counters.malformed++;
      return false;
    }
    const opcode = (msg[2]! >> 3) & 0x0f;
    if (opcode !== 0) {
      this.counters.count(0, RCODE.NOTIMP);
      this.replyError(msg, RCODE.NOTIMP, target);
      return false;
    }
    // a query holds one question and at most one additional record (EDNS OPT); anything
    // else is refused before the codec sees it, so a header that lies about its counts
    // cannot make the parser loop over thousands of phantom records
    if (msg.readUInt16BE(4) !== 1 || msg.readUInt16BE(6) !== 0 || msg.readUInt16BE(8) !== 0 || msg.readUInt16BE(10) > 1) {
      this.counters.malformed++;
      this.counters.count(0, RCODE.FORMERR);
      this.replyError(msg, RCODE.FORMERR, target);
      return false;
    }
    return true;
  }

  /** The question as dns2's parser reads it (what the fast reader does not take); undefined once answered FORMERR. */
  private parseQuestion(msg: Buffer, target: Target): Question | undefined {
    let req: Packet;
    try {
      req = Packet.parse(msg);
    } catch {
      this.counters.malformed++;
      this.replyError(msg, RCODE.FORMERR, target);
      return undefined;
    }
    const q = req.questions[0] as { name?: unknown; type?: unknown; class?: unknown } | undefined;
    if (req.questions.length !== 1 || !q || typeof q.name !== 'string' || typeof q.type !== 'number' || q.name.length > 253) {
      this.counters.malformed++;
      this.counters.count(0, RCODE.FORMERR);
      this.replyError(msg, RCODE.FORMERR, target);
      return undefined;
    }
    const opt = req.additionals.find((r) => r && (r as { type?: number }).type === 41) as { class?: number } | undefined;
    return {
      qname: q.name.replace(/\.$/, ''),
      qtype: q.type,
      qclass: typeof q.class === 'number' ? q.class : 1,
      edns: opt ? Math.max(512, opt.class ?? 512) : 0,
    };
  }

  /**
   * A clusterset.local question: the zone's answer, encoded once per distinct content
   * (the encodings are keyed by content, so they stay right across changes) and reused
   * without asking the zone while the one service it depends on has not changed: an export
   * leaves every other name's answer cached.
   */
  private answer(msg: Buffer, q: Question, udpLimit: number, target: Target): void {
    const { qname, qtype, qclass, edns } = q;
    const limit = edns > 0 ? Math.max(udpLimit, Math.min(edns, 1232)) : udpLimit;
    if (this.cacheGeneration !== this.opts.zone.generation) {
      this.stable.clear();
      this.cacheGeneration = this.opts.zone.generation;
    }
    // answers that do not rotate are reused without asking the zone again
    const skey = `${qname}|${qtype}|${qclass}|${edns > 0 ? 1 : 0}|${limit}`;
    const version = this.opts.zone.versionOf(qname.toLowerCase());
    const hit = this.stable.get(skey);
    if (hit && hit.version === version) {
      this.send(hit.buf, msg, qtype, hit.rcode, target);
      return;
    }
    let answer: Answer;
    try {
      answer = this.opts.zone.resolve(qname, qtype);
    } catch (err) {
      this.log.error({ err, qname }, 'zone lookup failed');
      this.counters.count(qtype, RCODE.SERVFAIL);
      this.replyError(msg, RCODE.SERVFAIL, target);
      return;
    }
    const key = cacheKey(qname, qtype, qclass, edns > 0, limit, answer);
    let encoded = this.cache.get(key);
    if (!encoded) {
      try {
        encoded = this.encode(qname, qtype, qclass, edns > 0, limit, answer);
      } catch (err) {
        this.log.error({ err, qname }, 'encoding the answer failed');
        this.counters.count(qtype, RCODE.SERVFAIL);
        this.replyError(msg, RCODE.SERVFAIL, target);
        return;
      }
      if (this.cache.size >= 16_384) this.cache.clear();
      this.cache.set(key, encoded);
    }
    if (answer.stable) {
      if (this.stable.size >= 16_384) this.stable.clear();
      this.stable.set(skey, { buf: encoded, rcode: answer.rcode, version });
    }
    this.send(encoded, msg, qtype, answer.rcode, target);
  }

  /** A FORMERR/NOTIMP/SERVFAIL/REFUSED answer to `req`, when its header is readable. */
  private replyError(req: Buffer, rcode: number, target: Target): void {
    const r = errorReply(req, rcode);
    if (r) this.reply(target, r);
  }

  /** A copy of an encoded answer with the query's ID and RD bit. */
  private send(encoded: Buffer, msg: Buffer, qtype: number, rcode: number, target: Target): void {
    const out = Buffer.allocUnsafe(encoded.length);
    encoded.copy(out);
    out[0] = msg[0]!;
    out[1] = msg[1]!;
    out[2] = out[2]! | (msg[2]! & 0x01);
    this.counters.count(qtype, rcode);
    this.reply(target, out);
  }

  private reply(target: Target, buf: Buffer): void {
    if ('socket' in target) {
      const s = target.socket;
      if (s.destroyed) return;
      const len = Buffer.allocUnsafe(2);
      len.writeUInt16BE(buf.length, 0);
      s.write(len);
      s.write(buf);
      return;
    }
    this.udp?.send(buf, target.port, target.address);
  }

  /** The response for a question (id 0, RD clear: the caller patches both in). */
  private encode(qname: string, qtype: number, qclass: number, edns: boolean, limit: number, answer: Answer): Buffer {
    const res = new Packet();
    res.header = new Packet.Header({ id: 0, qr: 1, opcode: 0, aa: 1, rd: 0, ra: this.opts.upstream ? 1 : 0, rcode: answer.rcode });
    res.questions = [{ name: qname, type: qtype, class: qclass }] as unknown as typeof res.questions;
    res.answers = answer.answers.map(toResource) as unknown as typeof res.answers;
    res.authorities = answer.authority.map(toResource) as unknown as typeof res.authorities;
    res.additionals = answer.additionals.map(toResource) as unknown as typeof res.additionals;
    if (edns)
      res.additionals.push(
        (Packet.Resource.EDNS as unknown as (r: object[], o: object) => object)([], { udpPayloadSize: 1232 }) as unknown as (typeof res.additionals)[number],
      );
    const out = res.toBuffer();
    if (out.length <= limit) return out;
    // too big for UDP: TC set, question only; the client retries over TCP
    const t = new Packet();
    t.header = new Packet.Header({ id: 0, qr: 1, opcode: 0, aa: 1, tc: 1, rd: 0, ra: this.opts.upstream ? 1 : 0, rcode: answer.rcode });
    t.questions = res.questions;
    return t.toBuffer();
  }

  private forward(msg: Buffer, qtype: number, target: Target): void {
    const up = this.opts.upstream;
    const sock = this.upstreamSock;
    if (!up || !sock || this.pending.size >= MAX_PENDING) {
      const rcode = up ? RCODE.SERVFAIL : RCODE.REFUSED;
      this.counters.count(qtype, rcode);
      if (up) this.counters.forwardFailures++;
      this.replyError(msg, rcode, target);
      return;
    }
    let id = this.randomId();
    while (this.pending.has(id)) id = this.randomId();
    // (msg may be the UDP transport's shared buffer: the pending query keeps a copy of its own)
    const request = Buffer.from(msg);
    const copy = Buffer.from(request);
    const origId = copy.readUInt16BE(0);
    copy.writeUInt16BE(id, 0);
    const timer = setTimeout(() => this.forwardTimeout(id), up.timeoutMs ?? 2000);
    timer.unref();
    this.pending.set(id, { id: origId, qtype, target, request, timer });
    this.counters.forwarded++;
    sock.send(copy);
  }

  /** A query ID an off-path sender cannot predict (the pending map is at most MAX_PENDING of 65536). */
  private randomId(): number {
    if (this.idsLeft === 0) {
      randomFillSync(this.ids);
      this.idsLeft = this.ids.length;
    }
    return this.ids[--this.idsLeft]!;
  }

  private forwardTimeout(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.counters.forwardFailures++;
    this.counters.count(p.qtype, RCODE.SERVFAIL);
    this.replyError(p.request, RCODE.SERVFAIL, p.target);
  }

  private onUpstreamMessage(msg: Buffer, rinfo: RemoteInfo): void {
    const up = this.opts.upstream;
    if (!up) return;
    // the socket is connected; checked here too, so a reply is never taken on the port alone
    if (rinfo.port !== up.port || rinfo.address !== this.upstreamAddress || msg.length < 12 || (msg[2]! & 0x80) === 0) {
      this.counters.upstreamRejected++;
      return;
    }
    const id = msg.readUInt16BE(0);
    const p = this.pending.get(id);
    if (!p || !sameQuestion(p.request, msg)) {
      this.counters.upstreamRejected++;
      return;
    }
    this.pending.delete(id);
    clearTimeout(p.timer);
    const out = Buffer.from(msg);
    out.writeUInt16BE(p.id, 0);
    this.counters.count(p.qtype, out[3]! & 0x0f);
    this.reply(p.target, out);
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const s of this.tcpConns) s.destroy();
    await Promise.all([
      this.udp ? this.udp.close() : Promise.resolve(),
      new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r())),
      new Promise<void>((r) => (this.upstreamSock ? this.upstreamSock.close(() => r()) : r())),
    ]);
  }
}

export async function startClustersetDns(opts: ClustersetDnsOptions): Promise<ClustersetDns> {
  const s = new ClustersetDnsServer(opts);
  await s.listen();
  return s;
}
