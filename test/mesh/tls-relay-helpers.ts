// Shared pieces of the native TLS relay tests: an echo application, a TCP forwarder that
// can cut the byte stream into small pieces (records split across reads) and inject raw
// bytes (malformed records), and a server sidecar under STRICT in front of the echo.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { SidecarProxy } from '../../src/mesh/dataplane/proxy/index.js';
import { native, tlsOffloadCounters } from '../../src/platform/native/index.js';
import type { WorkloadCert } from '../../src/mesh/control/index.js';
import { identityOf, testCa } from './helpers.js';

export interface Echo {
  port: number;
  /** every connection the app accepted, with what it received */
  conns: { sock: Socket; got: Buffer[]; closed: Promise<void> }[];
  close(): Promise<void>;
}

/** An application that echoes every byte back and ends when its client ends. */
export async function startEcho(): Promise<Echo> {
  const e: Echo = { port: 0, conns: [], close: async () => {} };
  const server: Server = createServer({ allowHalfOpen: true }, (sock) => {
    const c = { sock, got: [] as Buffer[], closed: closedOf(sock) };
    e.conns.push(c);
    sock.on('data', (d: Buffer) => {
      c.got.push(d);
      sock.write(d);
    });
    sock.on('end', () => sock.end());
    sock.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  e.port = (server.address() as AddressInfo).port;
  e.close = () =>
    new Promise<void>((r) => {
      for (const c of e.conns) c.sock.destroy();
      server.close(() => r());
    });
  return e;
}

export interface Forwarder {
  port: number;
  /** pieces of at most this many bytes, each written on its own (0: as read) */
  chop: number;
  /** the socket toward the target of the latest connection */
  upstream: Socket | undefined;
  /** set: the next chunk toward the target has this bit flipped (then it is cleared) */
  flipBit: number | undefined;
  /** the latest chunk forwarded toward the target, as it was */
  lastUp: Buffer | undefined;
  close(): Promise<void>;
}

/** A TCP forwarder to `target`; with `chop`, every chunk leaves in small pieces with pauses. */
export async function startForwarder(target: number, chop = 0): Promise<Forwarder> {
  const f: Forwarder = { port: 0, chop, upstream: undefined, flipBit: undefined, lastUp: undefined, close: async () => {} };
  const socks = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (down) => {
    const up = connect({ host: '127.0.0.1', port: target, allowHalfOpen: true });
    f.upstream = up;
    for (const s of [down, up]) {
      socks.add(s);
      s.setNoDelay(true);
      s.on('error', () => {
        down.destroy();
        up.destroy();
      });
    }
    const pipeChopped = (from: Socket, to: Socket): void => {
      let queue = Promise.resolve();
      from.on('data', (d: Buffer) => {
        if (to === f.upstream) {
          f.lastUp = Buffer.from(d);
          if (f.flipBit !== undefined) {
            const bit = f.flipBit % (d.length * 8);
            f.flipBit = undefined;
            d = Buffer.from(d);
            d[bit >> 3]! ^= 1 << (bit & 7);
          }
        }
        if (!f.chop) {
          to.write(d);
          return;
        }
        from.pause();
        const step = f.chop; // the test may change f.chop while a chunk is on its way
        queue = queue.then(async () => {
          for (let off = 0; off < d.length; off += step) {
            if (to.destroyed) return;
            to.write(d.subarray(off, off + step));
            await new Promise((r) => setImmediate(r));
          }
          from.resume();
        });
      });
      from.on('end', () => void queue.then(() => to.end()));
    };
    pipeChopped(down, up);
    pipeChopped(up, down);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  f.port = (server.address() as AddressInfo).port;
  f.close = () =>
    new Promise<void>((r) => {
      for (const s of socks) s.destroy();
      server.close(() => r());
    });
  return f;
}

export interface StrictServer {
  proxy: SidecarProxy;
  port: number;
  serverCert: WorkloadCert;
  clientCert: WorkloadCert;
}

/** A server sidecar (STRICT) in front of the app on `appPort`. */
export async function startStrictServer(appPort: number): Promise<StrictServer> {
  const ca = testCa();
  const serverCert = ca.issueSync('mesh', 'echo');
  const clientCert = ca.issueSync('mesh', 'client');
  const proxy = new SidecarProxy({ identity: identityOf(serverCert), inbound: { defaultMode: 'STRICT' }, outbound: { default: { mode: 'DISABLE' } } });
  const port = (await proxy.listenInbound({ host: '127.0.0.1', port: 0, app: { host: '127.0.0.1', port: appPort } })).port;
  return { proxy, port, serverCert, clientCert };
}

/** Node's TLS as the mesh client of a server sidecar (through `port`). */
export async function meshClient(port: number, s: StrictServer, extra: Record<string, unknown> = {}): Promise<TLSSocket> {
  const sock = tlsConnect({
    host: '127.0.0.1',
    port,
    cert: s.clientCert.certPem,
    key: s.clientCert.keyPem,
    ca: s.clientCert.rootPem,
    checkServerIdentity: () => undefined,
    ALPNProtocols: ['istio'],
    ...extra,
  });
  await once(sock, 'secureConnect');
  return sock;
}

/** Send `data` and read the same number of bytes back (an echo through the path). */
export async function roundTrip(sock: Socket, data: Buffer): Promise<Buffer> {
  const got: Buffer[] = [];
  let n = 0;
  const done = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      got.push(d);
      n += d.length;
      if (n >= data.length) finish();
    };
    const onClose = (): void => finish(new Error(`connection closed after ${n} of ${data.length} bytes`));
    const finish = (err?: Error): void => {
      sock.off('data', onData);
      sock.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    sock.on('data', onData);
    sock.on('close', onClose);
  });
  if (data.length === 0) return Buffer.alloc(0);
  sock.write(data);
  await done;
  return Buffer.concat(got);
}

/** handoffs and relays of this process so far */
export function relayCounts(): { handoffs: number; fallbacks: number; ended: number; failed: number; started: number; tickets: number; keyUpdates: number } {
  const s = native().tlsRelayStats();
  return { ...tlsOffloadCounters, started: s[1] as number, tickets: s[6] as number, keyUpdates: s[7] as number };
}

/** resolves when `sock` closes, whether with an error or not */
export function closedOf(sock: Socket): Promise<void> {
  return new Promise((resolve) => sock.once('close', () => resolve()));
}
