import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { connectStore, connectStoreFromFiles, openEmbeddedStore, serveStores, type ResourceStore } from '../../src/platform/store/index.js';
import { CM, cm, runStoreConformance } from '../conformance/store-suite.js';

const HISTORY = 20;
const TOKEN = 'test-token-0123456789abcdef';

async function world(clusters = ['cluster-a']) {
  const dir = mkdtempSync(join(tmpdir(), 'strait-api-'));
  const stores = new Map<string, ResourceStore>();
  for (const c of clusters) stores.set(c, openEmbeddedStore({ dir: join(dir, c), historyLimit: HISTORY }));
  const socketPath = join(dir, 'store.sock');
  const server = await serveStores({ socketPath, token: TOKEN, stores });
  return {
    dir,
    socketPath,
    stores,
    server,
    async cleanup() {
      await server.close();
      for (const s of stores.values()) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

runStoreConformance('embedded through the store API', async () => {
  const w = await world();
  const client = connectStore({ socketPath: w.socketPath, token: TOKEN, cluster: 'cluster-a' });
  return {
    store: client,
    historyLimit: HISTORY,
    async cleanup() {
      await client.close();
      await w.cleanup();
    },
  };
});

// async: the server runs in this process, so curl must not block its event loop
const curl = (socketPath: string, ...args: string[]) =>
  promisify(execFile)('curl', ['-s', '--unix-socket', socketPath, '-w', '\n%{http_code}', ...args], { encoding: 'utf8' });

describe('store API', () => {
  test('the socket is mode 0600', async () => {
    const w = await world();
    try {
      assert.equal(statSync(w.socketPath).mode & 0o777, 0o600);
    } finally {
      await w.cleanup();
    }
  });

  test('curl: no token or a wrong token is 401 with a STRAIT_ERR_UNAUTHORIZED body; the right token works', async () => {
    const w = await world();
    try {
      for (const header of [[], ['-H', 'Authorization: Bearer wrong'], ['-H', `Authorization: Bearer ${TOKEN}x`], ['-H', `Authorization: ${TOKEN}`]]) {
        const r = await curl(w.socketPath, ...header, 'http://store/v1/clusters');
        const [body, status] = r.stdout.split('\n');
        assert.equal(status, '401', `${header.join(' ')}: ${r.stdout}`);
        assert.equal(JSON.parse(body!).code, 'STRAIT_ERR_UNAUTHORIZED');
      }
      const ok = await curl(w.socketPath, '-H', `Authorization: Bearer ${TOKEN}`, 'http://store/v1/clusters');
      const [body, status] = ok.stdout.split('\n');
      assert.equal(status, '200');
      assert.deepEqual(JSON.parse(body!), { clusters: ['cluster-a'] });
    } finally {
      await w.cleanup();
    }
  });

  test('a client with a wrong token gets STRAIT_ERR_UNAUTHORIZED', async () => {
    const w = await world();
    const c = connectStore({ socketPath: w.socketPath, token: 'nope', cluster: 'cluster-a' });
    try {
      await assert.rejects(c.get(CM, 'x'), (err: unknown) => isStraitError(err, 'STRAIT_ERR_UNAUTHORIZED') && err.exitCode === 6);
    } finally {
      await c.close();
      await w.cleanup();
    }
  });

  test('one store per cluster; an unknown cluster is STRAIT_ERR_CLUSTER_UNKNOWN', async () => {
    const w = await world(['cluster-a', 'cluster-b', 'broker']);
    const a = connectStore({ socketPath: w.socketPath, token: TOKEN, cluster: 'cluster-a' });
    const b = connectStore({ socketPath: w.socketPath, token: TOKEN, cluster: 'cluster-b' });
    const x = connectStore({ socketPath: w.socketPath, token: TOKEN, cluster: 'cluster-x' });
    try {
      await a.apply(cm('only-in-a'));
      assert.ok(await a.get(CM, 'only-in-a'));
      assert.equal(await b.get(CM, 'only-in-a'), undefined);
      assert.ok(await w.stores.get('cluster-a')!.get(CM, 'only-in-a'));
      await assert.rejects(x.list(CM), (err: unknown) => isStraitError(err, 'STRAIT_ERR_CLUSTER_UNKNOWN') && /cluster-a, cluster-b, broker/.test(err.message));
    } finally {
      await Promise.all([a.close(), b.close(), x.close()]);
      await w.cleanup();
    }
  });

  test('connectStoreFromFiles reads the token file; a missing file is STRAIT_ERR_STORE_UNAVAILABLE', async () => {
    const w = await world();
    try {
      const tokenFile = join(w.dir, 'store.token');
      assert.throws(
        () => connectStoreFromFiles({ socketPath: w.socketPath, tokenFile, cluster: 'cluster-a' }),
        (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE'),
      );
      writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
      const c = connectStoreFromFiles({ socketPath: w.socketPath, tokenFile, cluster: 'cluster-a' });
      await c.apply(cm('via-file'));
      assert.ok(await c.get(CM, 'via-file'));
      await c.close();
    } finally {
      await w.cleanup();
    }
  });

  test('no server: calls fail with STRAIT_ERR_STORE_UNAVAILABLE (exit 5)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strait-api-'));
    const c = connectStore({ socketPath: join(dir, 'none.sock'), token: TOKEN, cluster: 'cluster-a' });
    try {
      await assert.rejects(c.list(CM), (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE') && err.exitCode === 5);
      const w = c.watch(CM, {}, () => undefined);
      await assert.rejects(w.done, (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE'));
    } finally {
      await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a watch ends with STRAIT_ERR_STORE_UNAVAILABLE when the server goes away', async () => {
    const w = await world();
    const c = connectStore({ socketPath: w.socketPath, token: TOKEN, cluster: 'cluster-a' });
    try {
      const seen: string[] = [];
      const { resourceVersion } = await c.list(CM);
      const watch = c.watch(CM, { resourceVersion }, (ev) => seen.push(ev.object.metadata.name));
      await c.apply(cm('seen'));
      for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(seen, ['seen']);
      await w.server.close();
      await assert.rejects(watch.done, (err: unknown) => isStraitError(err, 'STRAIT_ERR_STORE_UNAVAILABLE'));
    } finally {
      await c.close();
      await w.cleanup();
    }
  });

  test('errors keep their code, message and detail across the API', async () => {
    const w = await world();
    const c = connectStore({ socketPath: w.socketPath, token: TOKEN, cluster: 'cluster-a' });
    try {
      const a = await c.apply(cm('e'));
      await c.apply(cm('e', { data: { k: '2' } }));
      const err = await c.update(a).catch((e: unknown) => e);
      assert.ok(isStraitError(err, 'STRAIT_ERR_CONFLICT'));
      assert.equal(err.exitCode, 4);
      assert.equal(err.detail['expected'], a.metadata.resourceVersion);
      assert.match(err.message, /read it again and retry/);
    } finally {
      await c.close();
      await w.cleanup();
    }
  });

  test('the stream: the list and then the changes of several clusters and kinds on one connection, as NDJSON or server-sent events', async () => {
    const w = await world(['cluster-a', 'cluster-b']);
    const a = w.stores.get('cluster-a')!;
    const b = w.stores.get('cluster-b')!;
    await a.apply(cm('one', { ns: 'default' }));
    const { request } = await import('node:http');
    const open = (accept: string, query: string) =>
      new Promise<{ lines: () => string[]; close: () => void; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = request({ socketPath: w.socketPath, path: `/v1/stream?${query}`, headers: { authorization: `Bearer ${TOKEN}`, accept } }, (res) => {
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            buf += c;
          });
          resolve({ lines: () => buf.split('\n'), close: () => req.destroy(), headers: res.headers });
        });
        req.on('error', reject);
        req.end();
      });
    const until = async (f: () => boolean) => {
      const end = Date.now() + 5000;
      while (!f() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      assert.ok(f());
    };
    try {
      const q = `watch=cluster-a,v1,ConfigMap&watch=cluster-b,v1,ConfigMap,default`;
      const nd = await open('*/*', q);
      const sse = await open('text/event-stream', q);
      assert.equal(nd.headers['content-type'], 'application/x-ndjson');
      assert.match(String(sse.headers['content-type']), /^text\/event-stream/);
      const msgs = () =>
        nd
          .lines()
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { type: string; watch: number; items?: { metadata: { name: string } }[]; object?: { metadata: { name: string } } });
      await until(() => msgs().filter((m) => m.type === 'LIST').length === 2);
      const lists = msgs().filter((m) => m.type === 'LIST');
      assert.deepEqual(
        lists.find((m) => m.watch === 0)?.items?.map((i) => i.metadata.name),
        ['one'],
      );
      assert.deepEqual(lists.find((m) => m.watch === 1)?.items, []);
      await b.apply(cm('two', { ns: 'default' }));
      await until(() => msgs().some((m) => m.type === 'ADDED' && m.watch === 1 && m.object?.metadata.name === 'two'));
      // the same messages as server-sent events: "data: <json>" and a blank line each
      await until(() => sse.lines().some((l) => l.startsWith('data: ') && l.includes('"ADDED"') && l.includes('"two"')));
      assert.ok(sse.lines().includes('retry: 1000'));
      nd.close();
      sse.close();
      // a bad watch is a usage error naming it; no token is 401
      const bad = await curl(w.socketPath, '-H', `Authorization: Bearer ${TOKEN}`, 'http://store/v1/stream?watch=cluster-a,v1');
      const [body, status] = bad.stdout.split('\n');
      assert.equal(status, '400');
      assert.equal(JSON.parse(body!).code, 'STRAIT_ERR_USAGE');
      assert.match(JSON.parse(body!).message, /"cluster-a,v1"/);
      const anon = await curl(w.socketPath, 'http://store/v1/stream?watch=cluster-a,v1,ConfigMap');
      assert.equal(anon.stdout.split('\n')[1], '401');
    } finally {
      await w.cleanup();
    }
  });
});
