// Starting and stopping the servers of strait's processes the same way everywhere: on
// host:port, on a unix socket path, or on a listening socket `fd` made elsewhere (a pod's
// network namespace, a port the CLI bound for the world). A port that is taken or cannot
// be bound is a StraitError naming the address (STRAIT_ERR_PORT_IN_USE,
// STRAIT_ERR_LISTEN_FAILED), never a stack trace.
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';
import { E } from '../errors/index.js';

export interface ListeningServer {
  readonly port: number;
  close(): Promise<void>;
}

export type ListenTarget = { port: number; host: string } | { fd: number } | { path: string };

/** "127.0.0.1:3000", "[::1]:3000", a path, or "fd 5" */
export function describeListenTarget(t: ListenTarget): string {
  if ('fd' in t) return `fd ${t.fd}`;
  if ('path' in t) return t.path;
  return `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
}

/**
 * Listen on `target` and resolve with the bound address (AddressInfo, or the path).
 * Rejects with STRAIT_ERR_PORT_IN_USE when the address is taken, STRAIT_ERR_LISTEN_FAILED
 * for any other bind error (no such address, permission).
 */
export function startListening(server: Server, target: ListenTarget): Promise<AddressInfo | string> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => reject(listenError(target, err));
    server.once('error', onError);
    const done = (): void => {
      server.off('error', onError);
      const a = server.address();
      resolve(a ?? ('path' in target ? target.path : ''));
    };
    if ('fd' in target) server.listen({ fd: target.fd }, done);
    else if ('path' in target) server.listen(target.path, done);
    else server.listen(target.port, target.host, done);
  });
}

function listenError(target: ListenTarget, err: NodeJS.ErrnoException): Error {
  const where = describeListenTarget(target);
  if (err.code === 'EADDRINUSE') return E.portInUse(where);
  const reason = err.code === 'EACCES' ? 'permission denied (ports below 1024 need root)'
    : err.code === 'EADDRNOTAVAIL' ? 'no such address on this machine'
      : `${err.code ?? 'error'}: ${err.message}`;
  return E.listenFailed(where, reason);
}

/** An HTTP server on host:port (or on `fd`), with a close that also ends idle keep-alive connections. */
export async function listenServer(server: HttpServer, port: number, host: string, fd?: number): Promise<ListeningServer> {
  const addr = await startListening(server, fd === undefined ? { port, host } : { fd });
  return {
    port: typeof addr === 'object' ? addr.port : port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
