// Hostile request bodies and paths against the real servers over real sockets: the
// store API (unix socket), the control module's Argo CD-shaped API and githost. A body
// nested 10,000 deep, bad percent-encoding and a body that stops arriving are the
// client's fault: 4xx in each server's own error shape, never a 500, never a connection
// held open forever.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGitOpsService, type GitOpsService } from '../../src/gitops/control/index.js';
import { openEmbeddedStore, serveStores, type ResourceStore } from '../../src/platform/store/index.js';
import { api, startGithost, type Started } from '../helpers/githost.js';
import { rawRequest } from '../helpers/http.js';

const DEEP = 10_000;
const deepJson = (wrap: (inner: string) => string): string => wrap(`${'['.repeat(DEEP)}${']'.repeat(DEEP)}`);

const raw = rawRequest;

/** Send a request head that announces `declared` body bytes, then only `sent` of them; see what the server does within `waitMs`. */
function stall(port: number, head: string, declared: number, sent: number, waitMs: number): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let text = '';
    const sock: Socket = connect(port, '127.0.0.1', () => {
      sock.write(`${head}Content-Length: ${declared}\r\nConnection: keep-alive\r\n\r\n${' '.repeat(sent)}`);
    });
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ text, closed, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => done(false), waitMs);
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => {
      text += d;
    });
    sock.on('error', () => undefined);
    sock.on('close', () => done(true));
  });
}

describe('store API: hostile bodies and paths', () => {
  let dir: string;
  let socketPath: string;
  let store: ResourceStore;
  let server: { close(): Promise<void> };
  const auth = { authorization: 'Bearer hostile-bodies-token-0123', 'content-type': 'application/json' };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strait-hostile-'));
    socketPath = join(dir, 'store.sock');
    store = openEmbeddedStore({ dir: join(dir, 'a') });
    server = await serveStores({ socketPath, token: 'hostile-bodies-token-0123', stores: new Map([['cluster-a', store]]) });
  });
  after(async () => {
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: { name: string; method: string; path: string; body?: string; message: RegExp }[] = [
    {
      name: 'an object nested 10,000 deep',
      method: 'POST',
      path: '/v1/clusters/cluster-a/apply',
      body: deepJson(
        (d) =>
          `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","annotations":{"a":"b"}},"data":${d.replace(/\[/g, '{"a":').replace(/\]/g, '}').replace('{"a":}', '"x"')}}`,
      ),
      message: /deeper than 128 levels/,
    },
    {
      name: 'an array nested 10,000 deep',
      method: 'POST',
      path: '/v1/clusters/cluster-a/apply',
      body: deepJson((d) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"binaryData":${d}}`),
      message: /deeper than 128 levels/,
    },
    {
      name: 'bad percent-encoding in the cluster name',
      method: 'GET',
      path: '/v1/clusters/%E0%A4%A/list?apiVersion=v1&kind=Pod',
      message: /not valid percent-encoding/,
    },
    { name: 'a lone % in the cluster name', method: 'GET', path: '/v1/clusters/%/list?apiVersion=v1&kind=Pod', message: /not valid percent-encoding/ },
  ];
  for (const c of cases) {
    test(`${c.name}: 400 STRAIT_ERR_USAGE with a clear message`, async () => {
      const r = await raw({ socketPath }, c.method, c.path, auth, c.body);
      assert.equal(r.status, 400, r.body.slice(0, 300));
      const body = JSON.parse(r.body);
      assert.equal(body.code, 'STRAIT_ERR_USAGE');
      assert.equal(r.headers['strait-error-code'], 'STRAIT_ERR_USAGE', "the header names the body's code");
      assert.match(body.message, c.message);
    });
  }

  test('the store still serves after them', async () => {
    const r = await raw({ socketPath }, 'GET', '/v1/clusters', auth);
    assert.equal(r.status, 200);
  });
});

describe('control module API: hostile bodies and paths', () => {
  let dir: string;
  let store: ResourceStore;
  let svc: GitOpsService;
  let where: { host: string; port: number };
  let token: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strait-hostile-'));
    store = openEmbeddedStore({ dir: join(dir, 'store') });
    svc = await startGitOpsService({ store, namespace: 'argocd', stateDir: dir, port: 0, tls: false, initialPasswordFile: join(dir, 'pw') });
    where = { host: '127.0.0.1', port: svc.api.port };
    const login = await raw(
      where,
      'POST',
      '/api/v1/session',
      { 'content-type': 'application/json' },
      JSON.stringify({ username: 'admin', password: readFileSync(join(dir, 'pw'), 'utf8').trim() }),
    );
    assert.equal(login.status, 200, login.body);
    token = JSON.parse(login.body).token;
  });
  after(async () => {
    await svc.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: { name: string; method: string; path: string; body?: string; message: RegExp }[] = [
    {
      name: 'a login body nested 10,000 deep',
      method: 'POST',
      path: '/api/v1/session',
      body: deepJson((d) => `{"username":${d}}`),
      message: /deeper than 128 levels/,
    },
    {
      name: 'a key body nested 10,000 deep',
      method: 'POST',
      path: '/api/v1/gpgkeys',
      body: deepJson((d) => `{"publickey":{"keyData":${d}}}`),
      message: /deeper than 128 levels/,
    },
    {
      name: 'a webhook body nested 10,000 deep',
      method: 'POST',
      path: '/api/webhook',
      body: deepJson((d) => `{"repository":${d}}`),
      message: /deeper than 128 levels/,
    },
    { name: 'a body that is not JSON', method: 'POST', path: '/api/v1/session', body: '{"username":', message: /not valid JSON/ },
    { name: 'bad percent-encoding in an application name', method: 'GET', path: '/api/v1/applications/%E0%A4%A', message: /not valid percent-encoding/ },
    { name: 'bad percent-encoding in a key ID', method: 'DELETE', path: '/api/v1/gpgkeys/%ZZ', message: /not valid percent-encoding/ },
  ];
  for (const c of cases) {
    test(`${c.name}: 400 {error, code: 3, message}`, async () => {
      const r = await raw(where, c.method, c.path, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, c.body);
      assert.equal(r.status, 400, r.body.slice(0, 300));
      const body = JSON.parse(r.body);
      assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'message']);
      assert.equal(body.code, 3);
      // the body keeps Argo CD's shape; the code is in a header
      assert.equal(r.headers['strait-error-code'], /percent/.test(c.name) ? 'STRAIT_ERR_HTTP_TARGET_INVALID' : 'STRAIT_ERR_HTTP_BODY_INVALID');
      assert.match(body.message, c.message);
    });
  }
});

describe('githost: hostile bodies and bodies that stop arriving', () => {
  let gh: Started;
  let port: number;
  const BODY_TIMEOUT = 400;

  before(async () => {
    gh = await startGithost({ bodyTimeoutMs: BODY_TIMEOUT });
    port = Number(new URL(gh.url).port);
    const made = await api(gh.url, 'POST', '/api/v1/user/repos', { token: gh.adminToken, body: { name: 'stall' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  });
  after(async () => {
    await gh.close();
  });

  test("a body nested 10,000 deep: 422 DeserializationError in Gitea's shape", async () => {
    const r = await raw(
      { host: '127.0.0.1', port },
      'POST',
      '/api/v1/admin/users',
      { authorization: `token ${gh.adminToken}`, 'content-type': 'application/json' },
      deepJson((d) => `{"username":${d}}`),
    );
    assert.equal(r.status, 422, r.body.slice(0, 300));
    const body = JSON.parse(r.body);
    assert.deepEqual(Object.keys(body).sort(), ['message', 'url']);
    assert.equal(r.headers['strait-error-code'], 'STRAIT_ERR_GITHOST_FIELD_INVALID', "Gitea's body, the code in a header");
    assert.match(body.message, /DeserializationError: .*deeper than 128 levels/);
  });

  test('an API body that stops arriving: 408 and the connection closed after bodyTimeoutMs', async () => {
    const head = `POST /api/v1/user/repos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token ${gh.adminToken}\r\nContent-Type: application/json\r\n`;
    const r = await stall(port, head, 1000, 10, 5000);
    assert.ok(r.closed, `the connection was still open after 5 s; got ${JSON.stringify(r.text.slice(0, 200))}`);
    assert.match(r.text, /^HTTP\/1\.1 408 /);
    assert.match(r.text, /\r\nstrait-error-code: STRAIT_ERR_HTTP_BODY_TIMEOUT\r\n/i);
    assert.match(r.text, /"message":"\[\]: .*did not arrive within 0\.4 s"|did not arrive within 0\.4 s/);
    assert.ok(r.ms >= BODY_TIMEOUT - 50, `closed after ${r.ms} ms`);
  });

  test('a git push body that stops arriving: the connection is closed after bodyTimeoutMs', async () => {
    const basic = Buffer.from('gitea_admin:admin-pass-1').toString('base64');
    const head =
      `POST /gitea_admin/stall.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${basic}\r\n` +
      'Content-Type: application/x-git-receive-pack-request\r\n';
    const r = await stall(port, head, 100_000, 10, 5000);
    assert.ok(r.closed, `the connection was still open after 5 s; got ${JSON.stringify(r.text.slice(0, 200))}`);
    assert.ok(r.ms >= BODY_TIMEOUT - 50, `closed after ${r.ms} ms`);
  });

  test('githost still serves after them', async () => {
    const r = await api(gh.url, 'GET', '/api/v1/version');
    assert.equal(r.status, 200);
  });
});
