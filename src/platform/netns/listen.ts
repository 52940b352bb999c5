// Sockets inside other network namespaces, so one process can serve many pods (the
// world's pod runtime, the node-level mesh proxy):
// - a listening TCP socket made there (adopt the fd with net.Server.listen({ fd }): the
//   server accepts that namespace's connections and sees their peer addresses);
// - a TCP connection that leaves from there (connectInNetns: the socket is made in the
//   namespace, then node connects it; it goes by that namespace's routes, addresses and
//   nftables rules, which can spare it by its SO_MARK);
// - any synchronous work run there.
// A namespace is named by its name under /run/netns, an absolute path, or an fd from
// openNetns (held open: no path lookup per socket, and the namespace it names cannot be
// swapped under it).
import { closeSync } from 'node:fs';
import { Socket, type NetConnectOpts, type TcpNetConnectOpts } from 'node:net';
import { native } from '../native/index.js';
import { netnsPath } from './run.js';

function target(netns: string | number): string | number {
  return typeof netns === 'number' || netns.startsWith('/') ? netns : netnsPath(netns);
}

/** fd of a socket listening on address:port inside the netns; `mark`: its SO_MARK (0 = none) */
export function listenInNetns(netns: string | number, address: string, port: number, backlog = 511, mark = 0): number {
  return native().netnsListen(target(netns), address, port, backlog, mark);
}

/**
 * Run fn synchronously with this thread inside the netns, then come back (also when fn
 * throws). What fn creates synchronously on this thread (tunOpen, a native socket)
 * belongs to that namespace; asynchronous work does not.
 * For a process serving several namespaces (one data-plane process per cluster).
 */
export function inNetnsSync<T>(netns: string | number, fn: () => T): T {
  return native().netnsCall(target(netns), fn);
}

/** An fd naming the network namespace (checked to be one); close it with closeNetns. */
export function openNetns(netns: string): number {
  return native().netnsOpen(netns.startsWith('/') ? netns : netnsPath(netns));
}

export function closeNetns(fd: number): void {
  closeSync(fd);
}

/** fd of an unconnected non-blocking TCP socket made inside the namespace of nsFd (SO_MARK = mark when not 0). */
export function socketInNetns(nsFd: number, family: 4 | 6, mark = 0): number {
  return native().netnsSocket(nsFd, family, mark);
}

/**
 * net.connect, from inside the namespace of nsFd (options as net.connect's, `onread`
 * included; host must be an IP address). A socket that cannot be made there (the
 * namespace is gone, no descriptors left) is returned destroyed with that error, as a
 * connect that failed: callers handle one failure path.
 */
export function connectInNetns(nsFd: number, mark: number, opts: NetConnectOpts): Socket {
  const o = opts as TcpNetConnectOpts;
  const { host, port, ...rest } = o;
  let sock: Socket;
  try {
    const fd = socketInNetns(nsFd, host?.includes(':') ? 6 : 4, mark);
    sock = new Socket({ ...rest, fd } as ConstructorParameters<typeof Socket>[0]);
  } catch (err) {
    const failed = new Socket();
    process.nextTick(destroyWith, failed, err);
    return failed;
  }
  return sock.connect({ host: host as string, port });
}

function destroyWith(sock: Socket, err: Error): void {
  sock.destroy(err);
}
