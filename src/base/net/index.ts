// Starting and stopping the small HTTP servers of strait's processes the same way
// everywhere: on host:port, or on a listening socket `fd` made elsewhere (a pod's
// network namespace, a port the CLI bound for the world).
import { once } from 'node:events';
import type { Server } from 'node:http';

export interface ListeningServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function listenServer(server: Server, port: number, host: string, fd?: number): Promise<ListeningServer> {
  if (fd === undefined) server.listen(port, host);
  else server.listen({ fd });
  await once(server, 'listening');
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
