// followMeshConfig (src/mesh/dataplane/proxy/config-client.ts): the proxy's long poll of the
// mesh configuration service retries a failed request after the backoff (1 s, doubling, at
// most 5 s: src/base/backoff) and a configuration received starts the backoff over.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createWebhookTls } from '../../src/mesh/control/sidecar-injector/index.js';
import { followMeshConfig } from '../../src/mesh/dataplane/proxy/index.js';

test('config client: failures retried after 1 s, then 2 s; a configuration resets the backoff to 1 s', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-config-client-'));
  const tls = createWebhookTls(['127.0.0.1']);
  writeFileSync(join(dir, 'ca.pem'), tls.caPem);
  writeFileSync(join(dir, 'token'), 'tok\n');
  const at: number[] = [];
  // requests 1, 2 fail; 3 answers a configuration; 4 fails; 5 answers (unchanged: 304)
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    at.push(Date.now());
    const n = at.length;
    if (n === 3) res.writeHead(200, { etag: '"v1"', 'content-type': 'application/json' }).end('{"v":1}');
    else if (n >= 5) res.writeHead(304).end();
    else res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const errors: string[] = [];
  const configs: unknown[] = [];
  const client = followMeshConfig({
    url: `https://127.0.0.1:${port}`,
    path: '/v1/sidecar',
    tokenFile: join(dir, 'token'),
    caFile: join(dir, 'ca.pem'),
    waitS: 1,
    onConfig: (c) => configs.push(c),
    onError: (m) => errors.push(m),
  });
  try {
    const t0 = Date.now();
    while (at.length < 5) {
      assert.ok(Date.now() - t0 < 10_000, `only ${at.length} requests`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    assert.ok((gaps[0] as number) >= 950 && (gaps[0] as number) < 1900, `first retry after ${gaps[0]} ms`);
    assert.ok((gaps[1] as number) >= 1950 && (gaps[1] as number) < 2900, `second retry after ${gaps[1]} ms`);
    assert.ok((gaps[2] as number) < 500, `after a configuration the next poll at once (${gaps[2]} ms)`);
    assert.ok((gaps[3] as number) >= 950 && (gaps[3] as number) < 1900, `the backoff started over: ${gaps[3]} ms`);
    assert.deepEqual(configs, [{ v: 1 }]);
    assert.equal(errors.length, 3);
    assert.match(errors[0] ?? '', /\/v1\/sidecar: HTTP 503: busy/);
  } finally {
    client.stop();
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
