// A DNS server (dns2) over UDP and TCP that asks its resolvers in order; names no
// resolver owns get NXDOMAIN. Malformed packets are counted and dropped; a resolver
// that throws gives SERVFAIL, never a crash.
import { once } from 'node:events';
import type { Socket } from 'node:net';
import dns2 from 'dns2';
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

export async function startDnsServer(opts: DnsServerOptions): Promise<RunningDnsServer> {
  const stats: DnsStats = { queries: 0, nxdomain: 0, servfail: 0, malformed: 0 };
  const onRequest = (request: dns2.Packet, send: (r: dns2.Packet) => Promise<Buffer>): void => {
    send(answer(opts.resolvers, request, stats)).catch(() => undefined);
  };
  const udp = new dns2.UDPServer(onRequest);
  const tcp = new dns2.TCPServer(onRequest);
  const onBad = (): void => { stats.malformed++; };
  udp.on('requestError', onBad);
  tcp.on('requestError', onBad);
  udp.on('error', onBad);
  tcp.on('connection', (s: Socket) => { s.on('error', () => undefined); });
  udp.bind(opts.port, opts.address);
  await once(udp, 'listening');
  const port = udp.address().port;
  tcp.listen(port, opts.address);
  await once(tcp, 'listening');
  return {
    stats,
    port,
    async close() {
      await Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => tcp.close(() => resolve())),
      ]);
    },
  };
}
