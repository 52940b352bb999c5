// A TCP → unix-socket (or TCP) relay: how the host's loopback reaches a listener inside the local
// world. `strait up` can bind the host port before it enters its private namespaces and
// hand the descriptor in (listen {fd}); the socket stays in the host's namespace.
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { listenServer } from '../../../base/net/index.js';
import { splice } from './splice.js';

export type RelayListen = { host: string; port: number } | { fd: number };

export interface Relay {
  address: AddressInfo | undefined;
  connections: number;
  close(): Promise<void>;
}

/** `target`: a unix socket path, or a TCP address reachable from where the relay runs. */
export function startRelay(listen: RelayListen, target: string | { host: string; port: number }): Promise<Relay> {
  const relay: Relay = { address: undefined, connections: 0, close: async () => {} };
  const server: Server = createServer({ allowHalfOpen: true }, (down) => {
    relay.connections++;
    const up =
      typeof target === 'string' ? connect({ path: target, allowHalfOpen: true }) : connect({ host: target.host, port: target.port, allowHalfOpen: true });
    splice(down, up);
  });
  relay.close = () => new Promise<void>((r) => server.close(() => r()));
  return listenServer(server, listen).then((bound) => {
    relay.address = typeof bound.address === 'object' ? bound.address : undefined;
    return relay;
  });
}
