// Starting and stopping strait's servers the same way everywhere (HTTP, TLS or plain
// TCP): on host:port, on a unix socket path, or on a listening socket `fd` made elsewhere
// (a pod's network namespace, a port the CLI bound for the world). A failure to listen
// rejects; close() stops accepting and ends the connections that are still open.
import { once } from 'node:events';
import type { AddressInfo, Server, Socket } from 'node:net';

export type ListenAt = { port: number; host?: string } | { path: string } | { fd: number };

export interface ListeningServer {
  /** the bound TCP port (0 on a unix socket) */
  readonly port: number;
  /** host, port and family, or the socket path */
  readonly address: AddressInfo | string;
  close(): Promise<void>;
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
    throw err;
  }
  const addr = server.address();
  const address = addr ?? ('path' in at ? at.path : { address: '', family: '', port: 0 });
  return {
    port: typeof address === 'object' ? address.port : 0,
    address,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of open) s.destroy();
    }),
  };
}
