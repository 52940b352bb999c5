// The store API client's transport against a server that misbehaves the way real ones do: one
// that closes a kept-alive connection just as the next request goes out on it (its keep-alive
// timeout), and one that accepts and never answers (a cut-off broker).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { connectStore } from '../../src/platform/store/index.js';

const KIND = { apiVersion: 'v1', kind: 'ConfigMap' };

/** a raw HTTP/1.1 server on a unix socket: `onRequest(n, socket)` for the n-th request head (n from 1) */
async function rawServer(onRequest: (n: number, sock: Socket) => void): Promise<{ path: string; connections: () => number; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-client-'));
  const path = join(dir, 'api.sock');
  let n = 0;
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    connections++;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString();
      while (buf.includes('\r\n\r\n')) {
        buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
        onRequest(++n, sock);
      }
    });
  });
  await new Promise<void>((r) => server.listen(path, () => r()));
  return {
    path,
    connections: () => connections,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const answer = (sock: Socket): void => {
  const body = JSON.stringify({ object: null });
  sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`);
};

test('a request on a kept-alive connection the server closes under it is sent once more on a new connection', async () => {
  // the second request arrives on the kept-alive connection, which the server closes unanswered
  const srv = await rawServer((n, sock) => (n === 2 ? sock.destroy() : answer(sock)));
  const st = connectStore({ socketPath: srv.path, token: 't', cluster: 'c' });
  try {
    assert.equal(await st.get(KIND, 'x', 'default'), undefined);
    assert.equal(await st.get(KIND, 'y', 'default'), undefined, 'answered on the retry');
    assert.equal(srv.connections(), 2);
  } finally {
    await st.close();
    await srv.close();
  }
});

test('a fresh connection closed unanswered is not retried: STRAIT_ERR_STORE_UNAVAILABLE', async () => {
  const srv = await rawServer((_n, sock) => sock.destroy());
  const st = connectStore({ socketPath: srv.path, token: 't', cluster: 'c' });
  try {
    await assert.rejects(st.get(KIND, 'x', 'default'), (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE'));
    assert.equal(srv.connections(), 1);
  } finally {
    await st.close();
    await srv.close();
  }
});

test('a server that accepts and never answers fails the request after requestTimeoutMs (the broker client: 5 s)', async () => {
  const srv = await rawServer(() => undefined);
  const st = connectStore({ socketPath: srv.path, token: 't', cluster: 'c', requestTimeoutMs: 200 });
  try {
    await assert.rejects(
      st.get(KIND, 'x', 'default'),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE') && /no answer within 0.2 s/.test(err.message),
    );
  } finally {
    await st.close();
    await srv.close();
  }
});
