// Attack regressions for the local store API (docs/store.md): it is reachable from every
// network namespace of the world through its socket, so it must hold against hostile input.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connectStore, openEmbeddedStore, serveStores, type ResourceStore } from '../../src/platform/store/index.js';
import { rawRequest } from '../helpers/http.js';

const TOKEN = 'security-token-0123456789';

const raw = (socketPath: string, method: string, path: string, headers: Record<string, string>, body?: Buffer | string) =>
  rawRequest({ socketPath }, method, path, headers, body);

describe('store API under hostile input', () => {
  let dir: string;
  let socketPath: string;
  let store: ResourceStore;
  let server: { close(): Promise<void> };
  const auth = { authorization: `Bearer ${TOKEN}` };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strait-sec-'));
    socketPath = join(dir, 'store.sock');
    store = openEmbeddedStore({ dir: join(dir, 'a') });
    server = await serveStores({ socketPath, token: TOKEN, stores: new Map([['cluster-a', store]]) });
  });
  after(async () => {
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: { name: string; method: string; path: string; headers?: Record<string, string>; body?: string | Buffer; status: number; code: string }[] = [
    {
      name: 'token prefix only',
      method: 'GET',
      path: '/v1/clusters',
      headers: { authorization: `Bearer ${TOKEN.slice(0, 10)}` },
      status: 401,
      code: 'STRAIT_ERR_UNAUTHORIZED',
    },
    {
      name: 'token in another scheme',
      method: 'GET',
      path: '/v1/clusters',
      headers: { authorization: `Basic ${TOKEN}` },
      status: 401,
      code: 'STRAIT_ERR_UNAUTHORIZED',
    },
    {
      name: 'unauthenticated write',
      method: 'POST',
      path: '/v1/clusters/cluster-a/apply',
      headers: {},
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}',
      status: 401,
      code: 'STRAIT_ERR_UNAUTHORIZED',
    },
    { name: 'body that is not JSON', method: 'POST', path: '/v1/clusters/cluster-a/apply', body: '{not json', status: 400, code: 'STRAIT_ERR_USAGE' },
    { name: 'body that is a JSON string', method: 'POST', path: '/v1/clusters/cluster-a/apply', body: '"x"', status: 400, code: 'STRAIT_ERR_USAGE' },
    {
      name: 'body with a bad name',
      method: 'POST',
      path: '/v1/clusters/cluster-a/apply',
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"../../etc"}}',
      status: 400,
      code: 'STRAIT_ERR_USAGE',
    },
    {
      name: 'prototype pollution attempt',
      method: 'POST',
      path: '/v1/clusters/cluster-a/apply',
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p","__proto__":{"polluted":1}},"__proto__":{"polluted":1}}',
      status: 200,
      code: '',
    },
    {
      name: 'oversized body (17 MiB)',
      method: 'POST',
      path: '/v1/clusters/cluster-a/apply',
      body: Buffer.alloc(17 * 1024 * 1024, 0x20),
      status: 400,
      code: 'STRAIT_ERR_USAGE',
    },
    {
      name: 'path traversal in the cluster name',
      method: 'GET',
      path: '/v1/clusters/..%2F..%2Fetc/list?apiVersion=v1&kind=Pod',
      status: 404,
      code: 'STRAIT_ERR_CLUSTER_UNKNOWN',
    },
    { name: 'unknown operation', method: 'PATCH', path: '/v1/clusters/cluster-a/apply', status: 404, code: 'STRAIT_ERR_NOT_FOUND' },
    {
      name: 'watch with a non-numeric resourceVersion',
      method: 'GET',
      path: '/v1/clusters/cluster-a/watch?apiVersion=v1&kind=Pod&resourceVersion=1e9',
      status: 200,
      code: 'ERROR:STRAIT_ERR_USAGE',
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await raw(socketPath, c.method, c.path, c.headers ?? auth, c.body);
      assert.equal(r.status, c.status, r.body.slice(0, 300));
      if (c.code.startsWith('ERROR:')) assert.equal(JSON.parse(r.body.trim()).error.code, c.code.slice(6));
      else if (c.code) assert.equal(JSON.parse(r.body).code, c.code);
    });
  }

  test('the prototype pollution attempt polluted nothing; "__proto__" stays a plain data key', async () => {
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    const c = connectStore({ socketPath, token: TOKEN, cluster: 'cluster-a' });
    const body = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"data":{"__proto__":"x","a":"b"}}');
    await c.apply(body);
    await c.apply(JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"data":{"__proto__":"y"}}'));
    const got = await c.get({ apiVersion: 'v1', kind: 'ConfigMap' }, 'proto');
    assert.equal(JSON.stringify(got?.['data']), '{"__proto__":"y","a":"b"}');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    await c.close();
  });

  test('garbage bytes on the socket do not take the server down', async () => {
    for (const junk of [
      '\x00\x01\x02\xff',
      'GET / HTTP/9.9\r\n\r\n',
      'A'.repeat(100_000),
      'POST /v1/clusters/cluster-a/apply HTTP/1.1\r\ncontent-length: 99999999\r\n\r\n{',
    ]) {
      await new Promise<void>((resolve) => {
        const s = connect(socketPath, () => {
          s.end(junk);
        });
        s.on('error', () => resolve());
        s.on('close', () => resolve());
        s.resume();
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 500);
      });
    }
    const c = connectStore({ socketPath, token: TOKEN, cluster: 'cluster-a' });
    assert.ok(Array.isArray((await c.list({ apiVersion: 'v1', kind: 'ConfigMap' })).items));
    await c.close();
  });
});
