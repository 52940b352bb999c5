// The web console's server side on the control module's port (src/console): the page and
// its bundle, and the store API behind the API's session: the same paths and handler the
// CLI's store client uses, refusing what a console does not need (Secrets, ConfigMaps,
// writes other than ServiceExport and PeerAuthentication, cross-site writes).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createConsole } from '../../../src/console/server/index.js';
import { ADMIN_SECRET, startGitOpsService, type GitOpsService } from '../../../src/gitops/control/index.js';
import { Kinds } from '../../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../../helpers/embedded-store.js';

let dir: string;
let a: ResourceStore;
let b: ResourceStore;
let svc: GitOpsService;
let base: string;
let cookie: string;

const call = async (method: string, path: string, opts: { body?: unknown; cookie?: string; headers?: Record<string, string> } = {}) => {
  const res = await fetch(`${base}${path}`, {
    method,
    redirect: 'manual',
    // with the cookie, as the console's page sends it: from its own origin
    headers: {
      ...(opts.cookie ? { cookie: opts.cookie, origin: base } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, text, headers: res.headers };
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strait-console-'));
  a = tempEmbeddedStore();
  b = tempEmbeddedStore();
  const stores = new Map([
    ['cluster-a', a],
    ['cluster-b', b],
  ]);
  svc = await startGitOpsService({
    store: a,
    namespace: 'argocd',
    stateDir: dir,
    port: 0,
    tls: false,
    mounts: [createConsole({ stores, home: 'cluster-a', namespace: 'argocd' })],
  });
  base = svc.api.url;
  const secret = await a.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
  const password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
  const login = await call('POST', '/api/v1/session', { body: { username: 'admin', password } });
  assert.equal(login.status, 200);
  cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  assert.match(cookie, /^argocd\.token=/);
});

after(async () => {
  await svc?.close();
  await a?.close();
  await b?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the page: / redirects to /console/; the page carries its configuration, the bundle comes gzipped with an ETag, and both have a strict CSP', async () => {
  const root = await call('GET', '/');
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/console/');
  const page = await call('GET', '/console/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'.*frame-ancestors 'none'/);
  const config = JSON.parse(/<script type="application\/json" id="console-config">(.*?)<\/script>/.exec(page.text)![1]!) as {
    kinds: Record<string, string>;
    home: string;
  };
  assert.equal(config.home, 'cluster-a');
  assert.equal(config.kinds['ServiceExport'], Kinds.ServiceExport.apiVersion);
  // a route of the page is the page; an unknown file is not
  assert.equal((await call('GET', '/console/services')).status, 200);
  assert.equal((await call('GET', '/console/../../etc/passwd.js')).status, 404);
  const res = await fetch(`${base}/console/app.js`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /javascript/);
  assert.equal(res.headers.get('content-encoding'), 'gzip');
  const etag = res.headers.get('etag');
  assert.ok(etag);
  const again = await fetch(`${base}/console/app.js`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
  // no CDN: the bundle names no remote host to load from
  const js = await (await fetch(`${base}/console/app.js`)).text();
  assert.doesNotMatch(js, /(src|href)=["']https?:\/\//);
});

test('without a session the store API on the control port is 401 STRAIT_ERR_UNAUTHORIZED; a forged cookie too', async () => {
  for (const c of [undefined, 'argocd.token=forged.token.here']) {
    const r = await call('GET', '/v1/clusters', c ? { cookie: c } : {});
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json['code'], 'STRAIT_ERR_UNAUTHORIZED');
  }
  const s = await call('GET', '/v1/stream?watch=cluster-a,v1,Pod');
  assert.equal(s.status, 401);
});

test('with the session: the same store API paths as the CLI; the kinds of the views are served, Secrets and ConfigMaps are refused', async () => {
  const clusters = await call('GET', '/v1/clusters', { cookie });
  assert.deepEqual(clusters.json, { clusters: ['cluster-a', 'cluster-b'] });
  await b.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'default' }, spec: { ports: [{ port: 8080 }] } });
  const list = await call('GET', `/v1/clusters/cluster-b/list?apiVersion=v1&kind=Service`, { cookie });
  assert.equal(list.status, 200);
  assert.deepEqual(
    (list.json['items'] as KubeObject[]).map((o) => o.metadata.name),
    ['echo'],
  );
  for (const kind of ['Secret', 'ConfigMap', 'Lease']) {
    const api = kind === 'Lease' ? 'coordination.k8s.io/v1' : 'v1';
    const r = await call('GET', `/v1/clusters/cluster-a/list?apiVersion=${api}&kind=${kind}`, { cookie });
    assert.equal(r.status, 403, `${kind}: ${r.text}`);
    assert.equal(r.json['code'], 'STRAIT_ERR_STORE_FORBIDDEN');
    const one = await call('GET', `/v1/clusters/cluster-a/object?apiVersion=v1&kind=Secret&name=${ADMIN_SECRET}&namespace=argocd`, { cookie });
    assert.equal(one.status, 403);
    assert.doesNotMatch(one.text, /admin\.password/);
  }
  // a stream that asks for a Secret among allowed kinds is refused whole
  const st = await call('GET', '/v1/stream?watch=cluster-a,v1,Pod&watch=cluster-a,v1,Secret', { cookie });
  assert.equal(st.status, 403);
});

test('writes: a ServiceExport and a PeerAuthentication are applied and deleted; anything else, update/status and cross-site writes are refused', async () => {
  const se = { apiVersion: Kinds.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name: 'echo', namespace: 'default' } };
  const ok = await call('POST', '/v1/clusters/cluster-b/apply?fieldManager=strait-console', { cookie, body: se });
  assert.equal(ok.status, 200, ok.text);
  assert.ok(await b.get(Kinds.ServiceExport, 'echo', 'default'));
  const pa = {
    apiVersion: Kinds.PeerAuthentication.apiVersion,
    kind: 'PeerAuthentication',
    metadata: { name: 'default', namespace: 'mesh' },
    spec: { mtls: { mode: 'STRICT' } },
  };
  assert.equal((await call('POST', '/v1/clusters/cluster-a/apply', { cookie, body: pa })).status, 200);
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { a: 'b' } };
  const refused = await call('POST', '/v1/clusters/cluster-a/apply', { cookie, body: cm });
  assert.equal(refused.status, 403);
  assert.equal(refused.json['code'], 'STRAIT_ERR_STORE_FORBIDDEN');
  assert.equal(await a.get(Kinds.ConfigMap, 'x', 'default'), undefined);
  assert.equal((await call('PUT', '/v1/clusters/cluster-b/status', { cookie, body: { ...se, status: { conditions: [] } } })).status, 403);
  assert.equal(
    (
      await call('POST', '/v1/clusters/cluster-a/events', {
        cookie,
        body: { involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'x' }, type: 'Normal', reason: 'x', message: 'x' },
      })
    ).status,
    403,
  );
  // without a session a write is 401 and its body is not even read
  assert.equal((await call('POST', '/v1/clusters/cluster-b/apply', { body: se })).status, 401);
  const cross = await call(
    'DELETE',
    `/v1/clusters/cluster-b/object?apiVersion=${encodeURIComponent(Kinds.ServiceExport.apiVersion)}&kind=ServiceExport&name=echo&namespace=default`,
    { cookie, headers: { origin: 'http://evil.example' } },
  );
  assert.equal(cross.status, 403);
  assert.ok(await b.get(Kinds.ServiceExport, 'echo', 'default'));
  const del = await call(
    'DELETE',
    `/v1/clusters/cluster-b/object?apiVersion=${encodeURIComponent(Kinds.ServiceExport.apiVersion)}&kind=ServiceExport&name=echo&namespace=default`,
    { cookie, headers: { origin: base } },
  );
  assert.deepEqual(del.json, { deleted: true });
});

test('the stream over the control port: server-sent events of the list and then the change, within a second', async () => {
  const ctl = new AbortController();
  const res = await fetch(`${base}/v1/stream?watch=cluster-b,v1,Namespace`, { headers: { cookie, accept: 'text/event-stream' }, signal: ctl.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  const until = async (re: RegExp, ms: number) => {
    const end = Date.now() + ms;
    while (!re.test(text)) {
      const left = end - Date.now();
      assert.ok(left > 0, `no ${re} within ${ms} ms: ${text}`);
      const r = await Promise.race([
        reader.read(),
        new Promise<{ done: true; value: undefined }>((ok) => setTimeout(() => ok({ done: true, value: undefined }), left)),
      ]);
      if (r.value) text += Buffer.from(r.value).toString('utf8');
      if (r.done && !re.test(text)) assert.fail(`stream ended or timed out without ${re}: ${text}`);
    }
  };
  await until(/data: \{"type":"LIST"/, 5000);
  const t0 = Date.now();
  await b.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'console-live' } });
  await until(/"type":"ADDED".*console-live/, 1000);
  assert.ok(Date.now() - t0 < 1000);
  ctl.abort();
});

test('logging out clears the session cookie', async () => {
  const r = await call('DELETE', '/api/v1/session', { cookie });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('set-cookie') ?? '', /argocd\.token=;.*Max-Age=0/);
});
