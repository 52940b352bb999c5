// Two TunnelEndpoints joined by an in-memory "wire" with a ManualClock, for protocol
// tests without sockets. Every datagram is recorded so tests can replay or tamper.
import { ManualClock } from '../../src/base/clock/index.js';
import { TunnelEndpoint, nativeSessions, type Peer, type TunnelEvent, type TunnelLimits } from '../../src/multicluster/dataplane/tunnel/index.js';

export interface Datagram {
  from: 'a' | 'b';
  bytes: Buffer;
  /** the address it was sent to */
  to?: string;
}

export interface Pair {
  clock: ManualClock;
  a: TunnelEndpoint;
  b: TunnelEndpoint;
  wire: Datagram[];
  deliveredA: Buffer[];
  deliveredB: Buffer[];
  eventsA: TunnelEvent[];
  eventsB: TunnelEvent[];
  /** when false, datagrams are recorded but not delivered */
  link: { up: boolean; filter?: (d: Datagram) => boolean };
  inject(to: 'a' | 'b', bytes: Buffer): void;
}

export const ADDR_A = '192.0.2.1';

function native(): NonNullable<ReturnType<typeof nativeSessions>> {
  const f = nativeSessions();
  if (f === undefined) throw new Error('the native addon has no tunnel sessions (build it: node scripts/build.mjs)');
  return f;
}
export const ADDR_B = '192.0.2.2';

export function tunnelPair(
  opts: {
    pskA?: string;
    pskB?: string;
    limits?: Partial<TunnelLimits>;
    maxVersionA?: number;
    maxVersionB?: number;
    /** FEATURE_* bits each side advertises, and its largest datagram */
    featuresA?: number;
    featuresB?: number;
    maxDatagram?: number;
    /** sessions sealed and opened in the C addon (the gateway's native data path), per side */
    nativeA?: boolean;
    nativeB?: boolean;
    /** A's peer entry for cluster-b: the address it is configured with (default ADDR_B) and its other gateways */
    peerB?: { address?: string; alternates?: string[] };
    /** the wire delivers a datagram only when it is sent to the other side's address (default: whatever the address) */
    addressed?: boolean;
  } = {},
): Pair {
  const clock = new ManualClock(1_700_000_000_000);
  const wire: Datagram[] = [];
  const deliveredA: Buffer[] = [];
  const deliveredB: Buffer[] = [];
  const eventsA: TunnelEvent[] = [];
  const eventsB: TunnelEvent[] = [];
  const link: Pair['link'] = { up: true };
  const queue: { to: 'a' | 'b'; bytes: Buffer }[] = [];
  let draining = false;
  const pair = {} as Pair;
  function drain(): void {
    if (draining) return;
    draining = true;
    while (queue.length) {
      const d = queue.shift() as { to: 'a' | 'b'; bytes: Buffer };
      if (d.to === 'a') pair.a.receive(d.bytes, ADDR_B, 4500);
      else pair.b.receive(d.bytes, ADDR_A, 4500);
    }
    draining = false;
  }
  function sender(from: 'a' | 'b') {
    return (chunks: Buffer | Buffer[], _port: number, address: string): void => {
      const bytes = Buffer.isBuffer(chunks) ? Buffer.from(chunks) : Buffer.concat(chunks);
      const d = { from, bytes, to: address };
      wire.push(d);
      if (!link.up || (link.filter && !link.filter(d))) return;
      if (opts.addressed && address !== (from === 'a' ? ADDR_B : ADDR_A)) return;
      queue.push({ to: from === 'a' ? 'b' : 'a', bytes });
      drain();
    };
  }
  const a = new TunnelEndpoint({
    clusterId: 'cluster-a',
    psk: opts.pskA ?? 'psk-for-tests',
    clock,
    limits: opts.limits ?? {},
    maxVersion: opts.maxVersionA ?? 1,
    peers: [
      {
        clusterId: 'cluster-b',
        address: opts.peerB?.address ?? ADDR_B,
        subnets: ['10.2.0.0/16', '100.2.0.0/16'],
        ...(opts.peerB?.alternates ? { alternates: opts.peerB.alternates } : {}),
      },
    ],
    sendCopies: true,
    features: opts.featuresA ?? 0,
    ...(opts.maxDatagram ? { maxDatagram: opts.maxDatagram } : {}),
    ...(opts.nativeA ? { sessionCrypto: native() } : {}),
    send: sender('a'),
    deliver: (p: Buffer, _peer: Peer) => deliveredA.push(Buffer.from(p)),
    onEvent: (e) => eventsA.push(e),
  });
  const b = new TunnelEndpoint({
    clusterId: 'cluster-b',
    psk: opts.pskB ?? 'psk-for-tests',
    clock,
    limits: opts.limits ?? {},
    maxVersion: opts.maxVersionB ?? 1,
    peers: [{ clusterId: 'cluster-a', address: ADDR_A, subnets: ['10.1.0.0/16', '100.1.0.0/16'] }],
    sendCopies: true,
    features: opts.featuresB ?? 0,
    ...(opts.maxDatagram ? { maxDatagram: opts.maxDatagram } : {}),
    ...(opts.nativeB ? { sessionCrypto: native() } : {}),
    send: sender('b'),
    deliver: (p: Buffer, _peer: Peer) => deliveredB.push(Buffer.from(p)),
    onEvent: (e) => eventsB.push(e),
  });
  Object.assign(pair, {
    clock,
    a,
    b,
    wire,
    deliveredA,
    deliveredB,
    eventsA,
    eventsB,
    link,
    inject(to: 'a' | 'b', bytes: Buffer) {
      queue.push({ to, bytes });
      drain();
    },
  });
  return pair;
}

/** A minimal IPv4 packet (header checksum not computed: the tunnel does not care). */
export function fakePacket(marker: string, dst = '10.2.0.5'): Buffer {
  const body = Buffer.from(marker);
  const p = Buffer.alloc(20 + body.length);
  p[0] = 0x45;
  p.writeUInt16BE(p.length, 2);
  p[8] = 64;
  p[9] = 17;
  Buffer.from([10, 1, 0, 7]).copy(p, 12);
  Buffer.from(dst.split('.').map(Number)).copy(p, 16);
  body.copy(p, 20);
  return p;
}
