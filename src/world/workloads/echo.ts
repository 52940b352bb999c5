// The built-in image strait/echo: any HTTP request gets 200 and a JSON body saying
// who asked (the peer address and port this server saw) and who answered.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenAt, listenServer } from '../../base/net/index.js';

export interface EchoIdentity {
  cluster: string;
  namespace: string;
  pod: string;
  node: string;
}

export interface EchoReply extends EchoIdentity {
  remoteAddress: string;
  remotePort: number;
  method: string;
  path: string;
  host: string;
}

export interface EchoServer {
  readonly port: number;
  /** requests answered (read by the metrics collector) */
  readonly counters: { requests: number };
  close(): Promise<void>;
}

/**
 * Serve on host:port, or on `fd`: a listening socket made elsewhere (the pod runtime
 * makes it inside the pod's network namespace; the peer addresses are that namespace's).
 */
export async function startEcho(id: EchoIdentity, port: number, host = '0.0.0.0', fd?: number): Promise<EchoServer> {
  const counters = { requests: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    counters.requests++;
    const remote = req.socket.remoteAddress ?? '';
    const reply: EchoReply = {
      remoteAddress: remote.startsWith('::ffff:') ? remote.slice(7) : remote,
      remotePort: req.socket.remotePort ?? 0,
      ...id,
      method: req.method ?? '',
      path: req.url ?? '',
      host: req.headers.host ?? '',
    };
    const body = JSON.stringify(reply) + '\n';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    req.resume();
  });
  server.keepAliveTimeout = 5000;
  return { ...(await listenServer(server, listenAt(port, host, fd))), counters };
}
