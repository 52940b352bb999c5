// A DNS server (dns2 packets) over UDP and TCP that asks its resolvers in order; names no
// resolver owns get NXDOMAIN. Malformed packets are counted and dropped; a resolver
// that throws gives SERVFAIL, never a crash.
import type { RemoteInfo } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import dns2 from 'dns2';
import { listenServer } from '../../base/net/index.js';
import { plausibleQuery } from '../../multicluster/wire/dns-query/index.js';
import { TTL_SECONDS, type DnsResolver } from './zone.js';

const { Packet } = dns2;

export interface DnsServerOptions {
  address: string;
  port: number;
  resolvers: DnsResolver[];
}

export interface DnsStats {
  queries: number;
  nxdomain: number;
  servfail: number;
  malformed: number;
}

export interface RunningDnsServer {
  readonly stats: DnsStats;
  /** the UDP port bound (useful with port 0) */
  readonly port: number;
  close(): Promise<void>;
}

function answer(resolvers: DnsResolver[], request: dns2.Packet, stats: DnsStats): dns2.Packet {
  const response = Packet.createResponseFromRequest(request);
  response.header.aa = 1;
  stats.queries++;
  const q = request.questions[0];
  if (!q || request.questions.length !== 1) {
    response.header.rcode = 1; // FORMERR
    return response;
  }
  try {
    let result;
    for (const r of resolvers) {
      result = r.resolve(q.name, q.type);
      if (result) break;
    }
    if (!result || result.rcode === 3) {
      stats.nxdomain++;
      response.header.rcode = 3;
      return response;
    }
    for (const address of result.addresses) {
      response.answers.push({ name: q.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: TTL_SECONDS, address } as dns2.Packet.Resource);
    }
  } catch {
    stats.servfail++;
    response.header.rcode = 2;
    response.answers = [];
  }
  return response;
}

/** dns2's UDP server, with implausible packets dropped before its parser sees them */
class CheckedUdpServer extends dns2.UDPServer {
  constructor(
    onRequest: dns2.DnsHandler,
    private readonly stats: DnsStats,
  ) {
    super(onRequest);
  }

  override handle(data: Buffer, rinfo: RemoteInfo): void {
    if (!plausibleQuery(data)) {
      this.stats.malformed++;
      return;
    }
    super.handle(data, rinfo);
  }
}

const TCP_IDLE_MS = 10_000;

/** DNS over TCP (RFC 7766 framing: 2-byte length, then the message), pipelined. */
function tcpServer(resolvers: DnsResolver[], stats: DnsStats): Server {
  return createServer((sock: Socket) => {
    sock.setTimeout(TCP_IDLE_MS, () => sock.destroy());
    sock.on('error', () => undefined);
    let buffered: Buffer = Buffer.alloc(0);
    sock.on('data', (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      while (buffered.length >= 2) {
        const len = buffered.readUInt16BE(0);
        if (len > 4096) {
          stats.malformed++;
          sock.destroy();
          return;
        }
        if (buffered.length < 2 + len) return;
        const msg = buffered.subarray(2, 2 + len);
        buffered = buffered.subarray(2 + len);
        let request: dns2.Packet;
        try {
          if (!plausibleQuery(msg)) throw new Error('implausible query');
          request = dns2.Packet.parse(msg);
        } catch {
          stats.malformed++;
          sock.destroy();
          return;
        }
        const out = answer(resolvers, request, stats).toBuffer();
        const frame = Buffer.alloc(2 + out.length);
        frame.writeUInt16BE(out.length, 0);
        out.copy(frame, 2);
        sock.write(frame);
      }
    });
  });
}

export async function startDnsServer(opts: DnsServerOptions): Promise<RunningDnsServer> {
  const stats: DnsStats = { queries: 0, nxdomain: 0, servfail: 0, malformed: 0 };
  const onRequest = (request: dns2.Packet, send: (r: dns2.Packet) => Promise<Buffer>): void => {
    send(answer(opts.resolvers, request, stats)).catch(() => undefined);
  };
  const udp = new CheckedUdpServer(onRequest as dns2.DnsHandler, stats);
  const tcp = tcpServer(opts.resolvers, stats);
  const onBad = (): void => {
    stats.malformed++;
  };
  udp.on('requestError', onBad);
  udp.on('error', onBad);
  udp.bind(opts.port, opts.address);
  await once(udp, 'listening');
  const port = udp.address().port;
  await listenServer(tcp, { port, host: opts.address });
  return {
    stats,
    port,
    async close() {
      await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
    },
  };
}
