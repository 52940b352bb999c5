// A tiny HTTP echo application for the pod tests: node echo-app.js PORT; answers 200 with
// the peer address it saw; prints {"port":N} when listening.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(`hello from echo; peer ${req.socket.remoteAddress}\n`);
});
server.listen(Number(process.argv[2] ?? 0), '0.0.0.0', () => process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port }) + '\n'));
process.on('SIGTERM', () => process.exit(0));
