// meshFlowsPoster (src/mesh/dataplane/proxy/config-client.ts): an injected proxy's flow reports
// to the control module's POST /v1/flows over TLS with the pod's token; a report that could not
// be delivered is kept and sent first next time, bounded.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createWebhookTls } from '../../src/mesh/control/sidecar-injector/index.js';
import { meshFlowsPoster, type MeshFlowsPoster } from '../../src/mesh/dataplane/proxy/index.js';

const report = (n: number) => ({ limit: 256, evicted: 0, flows: [{ n }] });

/** A TLS /v1/flows server on loopback answering with `answer(n, req, res)` (n: the report's number), and a poster (maxQueued 2) aimed at it. */
async function fixture(
  answer: (n: number, req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ dir: string; poster: MeshFlowsPoster; errors: string[]; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'strait-flows-poster-'));
  const tls = createWebhookTls(['127.0.0.1']);
  writeFileSync(join(dir, 'ca.pem'), tls.caPem);
  writeFileSync(join(dir, 'token'), 'tok-1\n');
  const server: Server = createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c: string) => {
        body += c;
      })
      .on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/flows') {
          res.writeHead(404).end();
          return;
        }
        answer((JSON.parse(body) as { flows: { n: number }[] }).flows[0]?.n ?? 0, req, res);
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const errors: string[] = [];
  const poster = meshFlowsPoster({
    url: `https://127.0.0.1:${port}`,
    tokenFile: join(dir, 'token'),
    caFile: join(dir, 'ca.pem'),
    maxQueued: 2,
    onError: (m) => errors.push(m),
  });
  return {
    dir,
    poster,
    errors,
    close: () => {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('reports arrive in order with the token; after a failure the kept report goes first; the queue is bounded', async () => {
  const got: { auth: string | undefined; n: number }[] = [];
  let failing = true;
  const f = await fixture((n, req, res) => {
    if (failing) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}');
      return;
    }
    got.push({ auth: req.headers.authorization, n });
    res.writeHead(204).end();
  });
  try {
    const p = f.poster;
    await p.send(report(1));
    assert.equal(p.queued, 1, 'kept after the failure');
    assert.match(f.errors[0] ?? '', /\/v1\/flows: HTTP 503: \{"message":"busy"\}/);
    await p.send(report(2));
    await p.send(report(3));
    assert.equal(p.queued, 2, 'bounded: the oldest dropped');
    assert.equal(p.dropped, 1);
    failing = false;
    writeFileSync(join(f.dir, 'token'), 'tok-2\n'); // the kubelet rotated it: read at every request
    await p.send(report(4));
    assert.equal(p.queued, 0);
    // at most 2 kept, the new one included: 2 went too
    assert.equal(p.dropped, 2);
    assert.deepEqual(
      got.map((g) => g.n),
      [3, 4],
    );
    assert.ok(got.every((g) => g.auth === 'Bearer tok-2'));
    await p.send();
    assert.equal(got.length, 2, 'nothing queued, nothing sent');
  } finally {
    f.close();
  }
});

test('a report in flight survives a full queue behind it; a report refused as such (400) is dropped, not retried', async () => {
  const got: number[] = [];
  const f = await fixture((n, _req, res) => {
    if (n === 99) {
      res.writeHead(400).end('{"message":"bad"}');
      return;
    }
    // slow: the next reports queue up behind this one
    setTimeout(() => {
      got.push(n);
      res.writeHead(204).end();
    }, 300);
  });
  try {
    const p = f.poster;
    const first = p.send(report(1));
    for (const n of [2, 3, 4]) await p.send(report(n)); // busy: queued, 2 trimmed
    await first;
    assert.deepEqual(got, [1, 3, 4], 'the one in flight delivered, then the newest two');
    assert.equal(p.dropped, 1);
    await p.send(report(99));
    assert.equal(p.queued, 0, 'not kept');
    assert.equal(p.dropped, 2);
    assert.match(f.errors.at(-1) ?? '', /HTTP 400: the report was refused; dropped: \{"message":"bad"\}$/, "with the service's reason");
  } finally {
    f.close();
  }
});
