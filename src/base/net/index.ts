// Starting and stopping strait's servers the same way everywhere (HTTP, TLS or plain
// TCP): on host:port, on a unix socket path, or on a listening socket `fd` made elsewhere
// (a pod's network namespace, a port the CLI bound for the world). A failure to listen
// rejects with a StraitError naming the address: STRAIT_ERR_PORT_IN_USE when it is taken,
// STRAIT_ERR_LISTEN_FAILED otherwise, never a stack trace. close() stops accepting and ends
// the connections that are still open.
import { once } from 'node:events';
import type { AddressInfo, Server, Socket } from 'node:net';
import { E } from '../errors/index.js';

export type ListenAt = { port: number; host?: string } | { path: string } | { fd: number };

export interface ListeningServer {
  /** the bound TCP port (0 on a unix socket) */
  readonly port: number;
  /** host, port and family, or the socket path */
  readonly address: AddressInfo | string;
  close(): Promise<void>;
}

/** "127.0.0.1:3000", "[::1]:3000", "*:3000", a socket path, or "fd 5" */
export function describeListenAt(at: ListenAt): string {
  if ('fd' in at) return `fd ${at.fd}`;
  if ('path' in at) return at.path;
  const host = at.host ?? '*';
  return `${host.includes(':') ? `[${host}]` : host}:${at.port}`;
}

function listenError(at: ListenAt, err: NodeJS.ErrnoException): Error {
  const where = describeListenAt(at);
  if (err.code === 'EADDRINUSE') return E.portInUse(where);
  const reason =
    err.code === 'EACCES'
      ? 'permission denied (ports below 1024 need root)'
      : err.code === 'EADDRNOTAVAIL'
        ? 'no such address on this machine'
        : `${err.code ?? 'error'}: ${err.message}`;
  return E.listenFailed(where, reason);
}

/** Where to listen: a port and host, or a listening socket `fd` when one was handed over. */
export function listenAt(port: number, host: string, fd?: number): ListenAt {
  return fd === undefined ? { port, host } : { fd };
}

export async function listenServer(server: Server, at: ListenAt): Promise<ListeningServer> {
  const open = new Set<Socket>();
  const track = (s: Socket): void => {
    open.add(s);
    s.once('close', () => open.delete(s));
  };
  server.on('connection', track);
  if ('fd' in at) server.listen({ fd: at.fd });
  else if ('path' in at) server.listen(at.path);
  else server.listen(at.port, at.host);
  try {
    await once(server, 'listening');
  } catch (err) {
    server.off('connection', track);
    throw listenError(at, err as NodeJS.ErrnoException);
  }
  const addr = server.address();
  const address = addr ?? ('path' in at ? at.path : { address: '', family: '', port: 0 });
  return {
    port: typeof address === 'object' ? address.port : 0,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
      }),
  };
}
