// The ClientHello inspector (src/mesh/wire/tls-hello): real hellos from node:tls and curl,
// then 20k random and mutated inputs that must never throw.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { test } from 'node:test';
import { decode, MAX_RECORD } from '../../src/mesh/wire/tls-hello/index.js';

/** Capture the first bytes a client sends to a listener that never answers. */
async function capture(start: (port: number) => void): Promise<Buffer> {
  return new Promise((resolve) => {
    const server = createServer((s) => {
      let buf = Buffer.alloc(0);
      s.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        const info = decode(buf);
        if (info.status !== 'need-more' || buf.length > MAX_RECORD) {
          s.destroy();
          server.close();
          resolve(buf);
        }
      });
    });
    server.listen(0, '127.0.0.1', () => start((server.address() as AddressInfo).port));
  });
}

test('node:tls ClientHello: SNI and ALPN', async () => {
  const hello = await capture((port) => {
    const c = tlsConnect({
      host: '127.0.0.1',
      port,
      servername: 'echo.mesh.svc.cluster.local',
      ALPNProtocols: ['istio-peer-exchange', 'istio'],
      rejectUnauthorized: false,
    });
    c.on('error', () => {});
  });
  const info = decode(hello);
  assert.equal(info.status, 'ok');
  assert.equal(info.sni, 'echo.mesh.svc.cluster.local');
  assert.deepEqual(info.alpn, ['istio-peer-exchange', 'istio']);
  assert.equal(decode(hello.subarray(0, hello.length - 1)).status, 'need-more');
});

test('curl ClientHello: h2/http1.1 ALPN, no istio', async () => {
  const hello = await capture((port) => {
    execFile('curl', ['-sk', '--max-time', '2', `https://localhost:${port}/`], () => {});
  });
  const info = decode(hello);
  assert.equal(info.status, 'ok');
  assert.equal(info.sni, 'localhost');
  assert.ok(info.alpn.includes('http/1.1'));
  assert.ok(!info.alpn.some((a) => a.startsWith('istio')));
});

test('plaintext and truncated records', () => {
  assert.equal(decode(Buffer.from('GET / HTTP/1.1\r\n\r\n')).status, 'malformed');
  assert.equal(decode(Buffer.from([0x16, 0x03, 0x01])).status, 'need-more');
  assert.equal(decode(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x02, 0x01, 0x00])).status, 'malformed');
});

test('fuzz: 20k random and mutated hellos never throw', async () => {
  const base = await capture((port) => {
    const c = tlsConnect({ host: '127.0.0.1', port, servername: 'a.b', ALPNProtocols: ['istio'], rejectUnauthorized: false });
    c.on('error', () => {});
  });
  for (let i = 0; i < 20_000; i++) {
    let b: Buffer;
    if (i % 4 === 0) b = randomBytes(i % 64);
    else {
      b = Buffer.from(base.subarray(0, Math.max(6, base.length - (i % 50))));
      for (let k = 0; k < 1 + (i % 4); k++) {
        const at = 5 + ((i * 7919 + k * 104729) % (b.length - 5));
        b[at] = randomBytes(1)[0] as number;
      }
    }
    const info = decode(b);
    assert.ok(['ok', 'need-more', 'malformed'].includes(info.status));
  }
});
