// Cross-site request forgery from a same-site origin against the port that serves the web
// console (the control module's API port): `SameSite=Strict` lets a page on another port of
// the same host, or a sibling subdomain, send the admin's session cookie. Every state-changing
// route of that port (src/console/server/browser-writes.ts, checked here against the routes
// the server really serves) refuses a request carrying the cookie unless it comes from the
// serving origin; `Origin: null` is refused; JSON routes need application/json; a bearer token
// without an Origin (the argocd CLI, curl) still works. Over plain HTTP/1.1, TLS HTTP/1.1 and
// TLS HTTP/2 (what browsers use with TLS: the authority is `:authority`, not `Host`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as h2connect, type ClientHttp2Session } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BROWSER_WRITE_ROUTES, createConsole } from '../../src/console/server/index.js';
import { ADMIN_SECRET, selfSignedCertificate, startGitOpsService, type GitOpsService } from '../../src/gitops/control/index.js';
import { GROUPS, Kinds } from '../../src/platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { tempEmbeddedStore } from '../helpers/embedded-store.js';

type Answer = { status: number; text: string; json: Record<string, unknown>; headers: Record<string, string | string[] | undefined> };
type Send = (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<Answer>;

const parse = (text: string): Record<string, unknown> => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** HTTP/1.1 over TCP or TLS (node:http / node:https, no header normalisation) */
function h1(url: string, ca?: string): Send {
  const u = new URL(url);
  return (method, path, headers, body) =>
    new Promise((resolve, reject) => {
      const opts = { host: u.hostname, port: Number(u.port), method, path, headers, agent: false as const, ...(ca ? { ca } : {}) };
      const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(opts, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: parse(text), headers: res.headers }));
      });
      req.on('error', reject);
      req.end(body);
    });
}

/** HTTP/2 over TLS (ALPN h2): the authority goes as `:authority`, no Host header */
function h2(url: string, ca: string): { send: Send; session: ClientHttp2Session } {
  const session = h2connect(url, { ca });
  return {
    session,
    send: (method, path, headers, body) =>
      new Promise((resolve, reject) => {
        const s = session.request({ ':method': method, ':path': path, ...headers });
        let text = '';
        let status = 0;
        let got: Record<string, string | string[] | undefined> = {};
        s.setEncoding('utf8');
        s.on('response', (h) => {
          status = Number(h[':status']);
          got = h as typeof got;
        });
        s.on('data', (c: string) => {
          text += c;
        });
        s.on('end', () => resolve({ status, text, json: parse(text), headers: got }));
        s.on('error', reject);
        s.end(body);
      }),
  };
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
// the walk below makes failed logins from its own origin: not what this test is about
const loginLimits = { maxFailures: 10_000, windowSeconds: 300, maxEntries: 100 };
const fill = (template: string): string => template.replace('{name}', 'web').replace('{keyID}', '4AEE18F83AFDEB23').replace('{cluster}', 'cluster-a');

describe('writes with the console session cookie from another origin', () => {
  let dir: string;
  let a: ResourceStore;
  let b: ResourceStore;
  let plain: GitOpsService;
  let secure: GitOpsService;
  let cert: { cert: string; key: string };
  let password: string;
  let session: ClientHttp2Session | undefined;
  const transports: { name: string; send: Send; origin: string; sibling: string }[] = [];

  const v = `${GROUPS.gitops}/v1alpha1`;
  const guarded = {
    apiVersion: v,
    kind: 'AppProject',
    metadata: { name: 'web', namespace: 'argocd' },
    spec: {
      sourceRepos: ['*'],
      destinations: [{ server: 'https://kubernetes.default.svc', namespace: '*' }],
      sourceIntegrity: { git: { policies: [{ repos: [{ url: '*' }], gpg: { mode: 'head', keys: ['4AEE18F83AFDEB23'] } }] } },
    },
  };

  const login = async (send: Send): Promise<string> => {
    const r = await send('POST', '/api/v1/session', { 'content-type': 'application/json' }, JSON.stringify({ username: 'admin', password }));
    assert.equal(r.status, 200, r.text);
    const setCookie = ([] as string[]).concat(r.headers['set-cookie'] ?? []);
    const c = (setCookie[0] ?? '').split(';')[0]!;
    assert.match(c, /^argocd\.token=./);
    return c;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strait-sec-csrf-'));
    a = tempEmbeddedStore();
    b = tempEmbeddedStore();
    const stores = new Map([
      ['cluster-a', a],
      ['cluster-b', b],
    ]);
    cert = selfSignedCertificate(['127.0.0.1']);
    plain = await startGitOpsService({
      store: a,
      namespace: 'argocd',
      stateDir: join(dir, 'plain'),
      port: 0,
      tls: false,
      loginLimits,
      mounts: [createConsole({ stores, home: 'cluster-a', namespace: 'argocd' })],
    });
    secure = await startGitOpsService({
      store: a,
      namespace: 'argocd',
      stateDir: join(dir, 'tls'),
      port: 0,
      tls: cert,
      loginLimits,
      mounts: [createConsole({ stores, home: 'cluster-a', namespace: 'argocd' })],
    });
    const secret = await a.get<KubeObject & { data: Record<string, string> }>(Kinds.Secret, ADMIN_SECRET, 'argocd');
    password = Buffer.from(secret!.data['admin.password']!, 'base64').toString();
    await a.apply(guarded);
    const two = h2(secure.api.url, cert.cert);
    session = two.session;
    // the attacker's page: the same host, another port (same site, another origin)
    const sibling = (url: string): string => {
      const u = new URL(url);
      u.port = String(Number(u.port) + 1);
      return u.origin;
    };
    transports.push(
      { name: 'HTTP/1.1', send: h1(plain.api.url), origin: plain.api.url, sibling: sibling(plain.api.url) },
      { name: 'TLS HTTP/1.1', send: h1(secure.api.url, cert.cert), origin: secure.api.url, sibling: sibling(secure.api.url) },
      { name: 'TLS HTTP/2', send: two.send, origin: secure.api.url, sibling: sibling(secure.api.url) },
    );
  });

  after(async () => {
    session?.close();
    await plain?.close();
    await secure?.close();
    await a?.close();
    await b?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the list names every state-changing route the console's port serves (outside the RPCs, which take no cookie)", () => {
    const key = (r: { method: string; path: string }): string => `${r.method} ${r.path}`;
    const served = plain.api.routes
      .filter((r) => r.via !== 'rpc' && !SAFE.has(r.method))
      .map(key)
      .sort();
    const listed = BROWSER_WRITE_ROUTES.map(key).sort();
    assert.deepEqual(listed, served, 'a state-changing route is missing from src/console/server/browser-writes.ts (or listed but not served)');
    assert.ok(served.length >= 15, `${served.length} routes`);
    assert.ok(
      plain.api.routes.some((r) => r.via === 'rpc' && r.path === '/project.ProjectService/Update'),
      'the RPCs are enumerated too',
    );
  });

  test('every listed route refuses the cookie from a sibling origin, from Origin: null, and without an Origin; JSON routes refuse text/plain', async () => {
    for (const t of transports) {
      const cookie = await login(t.send);
      for (const r of BROWSER_WRITE_ROUTES) {
        const path = fill(r.path);
        const body = r.method === 'DELETE' ? undefined : '{}';
        const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
        const attempts: [string, Record<string, string>][] = [
          ['same-site sibling origin', { cookie, origin: t.sibling, 'sec-fetch-site': 'same-site', ...json }],
          ['Origin: null', { cookie, origin: 'null', ...json }],
          ['no Origin, Sec-Fetch-Site: same-site', { cookie, 'sec-fetch-site': 'same-site', ...json }],
          ['no Origin at all', { cookie, ...json }],
        ];
        // a server with TLS of its own refuses http:// of its authority (without TLS it takes https://: a proxy in front)
        if (t.origin.startsWith('https:'))
          attempts.push(['http:// of the same host and port', { cookie, origin: t.origin.replace(/^https:/, 'http:'), ...json }]);
        for (const [what, headers] of attempts) {
          const got = await t.send(r.method, path, headers, body);
          assert.equal(got.status, 403, `${t.name} ${r.method} ${path} (${what}): ${got.text}`);
          assert.equal(got.json['straitCode'], 'STRAIT_ERR_CROSS_ORIGIN', `${t.name} ${r.method} ${path} (${what})`);
        }
        if (r.method !== 'DELETE') {
          const form = await t.send(r.method, path, { cookie, origin: t.origin, 'content-type': 'text/plain' }, body ?? '');
          assert.equal(form.status, 400, `${t.name} ${r.method} ${path} (text/plain): ${form.text}`);
          assert.equal(form.json['straitCode'], 'STRAIT_ERR_CONTENT_TYPE');
        }
        // from the page's own origin the check lets it through (whatever the route then answers)
        const own = [{ origin: t.origin }, { 'sec-fetch-site': 'same-origin' }] as Record<string, string>[];
        if (t.origin.startsWith('http:')) own.push({ origin: t.origin.replace(/^http:/, 'https:') });
        for (const own1 of own) {
          const ok = await t.send(r.method, path, { cookie, ...own1, ...json }, body);
          assert.ok(
            ok.json['straitCode'] !== 'STRAIT_ERR_CROSS_ORIGIN' && ok.json['straitCode'] !== 'STRAIT_ERR_CONTENT_TYPE',
            `${t.name} ${r.method} ${path} from its own origin: ${ok.text}`,
          );
        }
      }
    }
  });

  test('the attacks of a same-site page change nothing: sourceIntegrity stays, no SSH signer or GnuPG key is added, no mesh-wide DISABLE is written', async () => {
    for (const t of transports) {
      const cookie = await login(t.send);
      const evil = { cookie, origin: t.sibling, 'content-type': 'application/json' };
      await t.send('PUT', '/api/v1/projects/web', evil, JSON.stringify({ project: { spec: { ...guarded.spec, sourceIntegrity: null } } }));
      await t.send(
        'POST',
        '/api/v1/projects',
        { cookie, origin: 'null', 'content-type': 'application/json' },
        JSON.stringify({ project: { metadata: { name: 'web' }, spec: { sourceRepos: ['*'] } }, upsert: true }),
      );
      await t.send(
        'POST',
        '/api/v1/sshsigners?upsert=true',
        { cookie, 'content-type': 'text/plain' },
        JSON.stringify({ allowedSigners: 'evil@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl' }),
      );
      await t.send('POST', '/api/v1/applications/web/sync', { cookie, 'sec-fetch-site': 'same-site', 'content-type': 'application/json' }, '{}');
      await t.send(
        'POST',
        '/v1/clusters/cluster-a/apply',
        { cookie, origin: 'null', 'content-type': 'application/json' },
        JSON.stringify({
          apiVersion: Kinds.PeerAuthentication.apiVersion,
          kind: 'PeerAuthentication',
          metadata: { name: 'default', namespace: 'istio-system' },
          spec: { mtls: { mode: 'DISABLE' } },
        }),
      );
      const p = await a.get<KubeObject & { spec: Record<string, unknown> }>({ apiVersion: v, kind: 'AppProject' }, 'web', 'argocd');
      assert.deepEqual(p?.spec['sourceIntegrity'], guarded.spec.sourceIntegrity, `${t.name}: the project keeps its sourceIntegrity`);
      const signers = await t.send('GET', '/api/v1/sshsigners', { cookie });
      assert.deepEqual(signers.json['items'] ?? [], [], `${t.name}: no SSH signer was added`);
      assert.equal(await a.get(Kinds.PeerAuthentication, 'default', 'istio-system'), undefined, `${t.name}: no mesh-wide PeerAuthentication`);
    }
  });

  test("the console's own writes go through on every transport (over HTTP/2 too, where the authority is `:authority`)", async () => {
    for (const t of transports) {
      const cookie = await login(t.send);
      const se = { apiVersion: Kinds.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name: 'echo', namespace: 'default' } };
      const put = await t.send(
        'POST',
        '/v1/clusters/cluster-b/apply?fieldManager=strait-console',
        { cookie, origin: t.origin, 'content-type': 'application/json' },
        JSON.stringify(se),
      );
      assert.equal(put.status, 200, `${t.name}: ${put.text}`);
      assert.ok(await b.get(Kinds.ServiceExport, 'echo', 'default'));
      const del = await t.send(
        'DELETE',
        `/v1/clusters/cluster-b/object?apiVersion=${encodeURIComponent(se.apiVersion)}&kind=ServiceExport&name=echo&namespace=default`,
        { cookie, origin: t.origin },
      );
      assert.deepEqual(del.json, { deleted: true }, `${t.name}: ${del.text}`);
      const out = await t.send('DELETE', '/api/v1/session', { cookie, origin: t.origin });
      assert.equal(out.status, 200, `${t.name}: ${out.text}`);
    }
  });

  test('a bearer token without an Origin (the argocd CLI, curl) still writes; the cookie alone authenticates no RPC', async () => {
    for (const t of transports) {
      const cookie = await login(t.send);
      const token = cookie.slice('argocd.token='.length);
      const r = await t.send(
        'POST',
        '/api/v1/applications/none/sync',
        { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        '{}',
      );
      assert.equal(r.status, 404, `${t.name}: the sync ran (and found no such Application): ${r.text}`);
      // Connect's JSON unary call from the page's own origin, with the cookie and no token: not authenticated
      const rpc = await t.send(
        'POST',
        '/project.ProjectService/Update',
        { cookie, origin: t.origin, 'content-type': 'application/json' },
        JSON.stringify({ project: { metadata: { name: 'web' }, spec: { sourceRepos: ['*'] } } }),
      );
      assert.equal(rpc.status, 401, `${t.name}: ${rpc.text}`);
      const p = await a.get<KubeObject & { spec: Record<string, unknown> }>({ apiVersion: v, kind: 'AppProject' }, 'web', 'argocd');
      assert.deepEqual(p?.spec['sourceIntegrity'], guarded.spec.sourceIntegrity);
    }
  });

  test('the session cookie is Secure when the API serves TLS (and only then)', async () => {
    const tlsLogin = await transports[1]!.send(
      'POST',
      '/api/v1/session',
      { 'content-type': 'application/json' },
      JSON.stringify({ username: 'admin', password }),
    );
    assert.match(String(tlsLogin.headers['set-cookie']), /; Secure(;|$)/);
    const h2Login = await transports[2]!.send(
      'POST',
      '/api/v1/session',
      { 'content-type': 'application/json' },
      JSON.stringify({ username: 'admin', password }),
    );
    assert.match(String(h2Login.headers['set-cookie']), /; Secure(;|$)/);
    const plainLogin = await transports[0]!.send(
      'POST',
      '/api/v1/session',
      { 'content-type': 'application/json' },
      JSON.stringify({ username: 'admin', password }),
    );
    assert.doesNotMatch(String(plainLogin.headers['set-cookie']), /Secure/);
  });
});
