// The daemons' small HTTP surface: GET /metrics (Prometheus text) and GET /records (JSON).
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

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
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, listen, () => resolve());
  });
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : port };
}
