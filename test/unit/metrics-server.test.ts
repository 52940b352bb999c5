// serveMetrics (src/platform/metrics): /metrics, the JSON extras and the /readyz probe,
// over real HTTP on loopback.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Registry, serveMetrics } from '../../src/platform/metrics/index.js';

test('/readyz: 503 naming what is pending, 200 ok once nothing is; /metrics and the extras beside it; 404 names the paths', async () => {
  const registry = new Registry();
  new Counter({ name: 'strait_test_total', help: 'a test counter', registers: [registry] }).inc(3);
  let waiting: string[] = ['the caBundle of MutatingWebhookConfiguration x', 'the join'];
  const s = await serveMetrics(registry, { host: '127.0.0.1', port: 0 }, { records: () => ({ n: 1 }) }, () => waiting);
  try {
    const base = `http://127.0.0.1:${s.port}`;
    const get = async (p: string): Promise<{ status: number; body: string }> => {
      const r = await fetch(base + p);
      return { status: r.status, body: await r.text() };
    };
    assert.deepEqual(await get('/readyz'), { status: 503, body: 'not ready: waiting for the caBundle of MutatingWebhookConfiguration x; the join\n' });
    waiting = [];
    assert.deepEqual(await get('/readyz'), { status: 200, body: 'ok\n' });
    assert.match((await get('/metrics')).body, /^strait_test_total 3$/m);
    assert.deepEqual(JSON.parse((await get('/records')).body), { n: 1 });
    assert.deepEqual(await get('/nope'), { status: 404, body: 'not found; try /metrics or /readyz or /records\n' });
  } finally {
    await s.close();
  }
});

test('/readyz is not served where no readiness is given (404, as any unknown path)', async () => {
  const s = await serveMetrics(new Registry(), { host: '127.0.0.1', port: 0 });
  try {
    const r = await fetch(`http://127.0.0.1:${s.port}/readyz`);
    assert.equal(r.status, 404);
    assert.equal(await r.text(), 'not found; try /metrics\n');
  } finally {
    await s.close();
  }
});
