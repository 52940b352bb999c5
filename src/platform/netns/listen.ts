// Work inside another network namespace from this process (the C addon, setns(2)):
// a listening TCP socket made there (adopt the fd with net.Server.listen({ fd }): the
// server accepts that namespace's connections and sees their peer addresses), or any
// synchronous work run there.
import { native } from '../native/index.js';
import { netnsPath } from './run.js';

/** fd of a socket listening on address:port inside the named netns (or an absolute path) */
export function listenInNetns(netns: string, address: string, port: number, backlog = 511): number {
  const path = netns.startsWith('/') ? netns : netnsPath(netns);
  return native()['netnsListen']?.(path, address, port, backlog) as number;
}

/**
 * Run fn synchronously with this thread inside the named netns (or an absolute path),
 * then come back (also when fn throws). What fn creates synchronously on this thread
 * (tunOpen, a native socket) belongs to that namespace; asynchronous work does not.
 * For a process serving several namespaces (one data-plane process per cluster).
 */
export function inNetnsSync<T>(netns: string, fn: () => T): T {
  const path = netns.startsWith('/') ? netns : netnsPath(netns);
  return native()['netnsCall']?.(path, fn) as T;
}
