// A listening TCP socket inside another network namespace (the C addon: setns(2) in,
// socket + bind + listen, setns back). Adopt the fd with net.Server.listen({ fd }):
// the server then accepts connections of that namespace and sees their peer addresses.
import { native } from '../native/index.js';
import { netnsPath } from './run.js';

/** fd of a socket listening on address:port inside the named netns (or an absolute path) */
export function listenInNetns(netns: string, address: string, port: number, backlog = 511): number {
  const path = netns.startsWith('/') ? netns : netnsPath(netns);
  return native()['netnsListen']?.(path, address, port, backlog) as number;
}
