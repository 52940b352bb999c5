// One port for every client of the control module's API: HTTP/1.1 (REST, gRPC-web) and
// HTTP/2 (gRPC, REST). With TLS, ALPN picks the protocol (h2 or http/1.1); without TLS
// (`--plaintext`), the first bytes do: the HTTP/2 connection preface ("PRI * HTTP/2.0")
// goes to an h2c server, anything else to an HTTP/1.1 server.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createSecureServer, createServer as createH2cServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createNetServer, type Server } from 'node:net';
import { listenServer } from '../../base/net/index.js';

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;

export interface ApiListener {
  server: Server;
  port: number;
  close(): Promise<void>;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0');

export async function listenApi(
  handler: (req: AnyRequest, res: AnyResponse) => void,
  opts: { host: string; port: number; tls?: { cert: string; key: string } | undefined },
): Promise<ApiListener> {
  let server: Server;
  if (opts.tls) {
    server = createSecureServer({ cert: opts.tls.cert, key: opts.tls.key, allowHTTP1: true }, handler);
  } else {
    const h1 = createHttpServer(handler);
    const h2c = createH2cServer(handler);
    server = createNetServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        socket.pause();
        socket.unshift(chunk);
        const n = Math.min(chunk.length, PREFACE.length);
        (n > 0 && chunk.subarray(0, n).equals(PREFACE.subarray(0, n)) ? h2c : h1).emit('connection', socket);
        process.nextTick(() => socket.resume());
      });
    });
  }
  // one way to listen for every server (a taken port is STRAIT_ERR_PORT_IN_USE, naming it)
  const listening = await listenServer(server, { port: opts.port, host: opts.host });
  return { server, port: listening.port, close: () => listening.close() };
}
