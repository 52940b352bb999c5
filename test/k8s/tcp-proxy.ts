// A loopback TCP proxy that a test can cut (every connection reset, new ones refused)
// and restore: a network partition between a client and the API server, on demand.
import { createConnection, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let open = true;
  const live = new Set<Socket>();
  const server = createServer((client) => {
    if (!open) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    live.add(client);
    live.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      live.delete(client);
      live.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : 0,
    cut() {
      open = false;
      for (const s of live) s.resetAndDestroy();
      live.clear();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise((r) => {
        for (const s of live) s.destroy();
        server.close(() => r());
      }),
  };
}
