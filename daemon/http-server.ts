// The daemons' small HTTP surface: GET /metrics (Prometheus text) and GET /records (JSON).
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { startListening } from '../src/base/net/index.js';

export async function serveStatus(listen: string, port: number, registry: Registry, records: () => unknown): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/metrics') {
      registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(text);
      }, (err: unknown) => {
        res.writeHead(500);
        res.end(String(err));
      });
      return;
    }
    if (req.method === 'GET' && req.url === '/records') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(records()));
      return;
    }
    res.writeHead(404);
    res.end('not found: try /metrics or /records\n');
  });
  const addr = await startListening(server, { port, host: listen });
  return { server, port: typeof addr === 'object' ? addr.port : port };
}
