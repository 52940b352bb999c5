// The store client's reads survive the server closing a kept-alive socket between two
// requests (its idle timeout racing the client's write): the read is sent once more on a new
// socket. Writes are not repeated: the server may have applied them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connectStore } from '../../src/platform/store/index.js';

const KIND = { apiVersion: 'v1', kind: 'ConfigMap' };
const OK = JSON.stringify({ object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } } });

/** A server that answers the first request of every connection and closes the connection at its second. */
async function oneAnswerPerSocket(socketPath: string): Promise<{ requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    sockets.add(sock);
    let n = 0;
    let buf = '';
    sock.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end);
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        buf = buf.slice(end + 4 + len);
        requests.push(head.split(' ', 2).join(' '));
        if (++n === 1) sock.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${OK.length}\r\nconnection: keep-alive\r\n\r\n${OK}`);
        else sock.destroy(); // closed without an answer: the client sees ECONNRESET ("socket hang up")
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  return {
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

test('a read on a kept-alive socket the server reset is sent again on a new socket; a write is not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-stale-'));
  const socketPath = join(dir, 's.sock');
  const srv = await oneAnswerPerSocket(socketPath);
  const store = connectStore({ socketPath, token: 't', cluster: 'cluster-a' });
  try {
    assert.equal((await store.get(KIND, 'x', 'default'))?.metadata.name, 'x');
    // the same kept-alive socket: the server closes it unanswered; the read is answered on a new one
    assert.equal((await store.get(KIND, 'x', 'default'))?.metadata.name, 'x');
    assert.equal(srv.requests.length, 3, srv.requests.join('\n'));
    // a write on such a socket is reported, not repeated
    await assert.rejects(store.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y', namespace: 'default' } }), /STRAIT_ERR|not reachable/);
    assert.equal(srv.requests.filter((r) => r.startsWith('POST')).length, 1, srv.requests.join('\n'));
  } finally {
    await store.close();
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
