// Fuzz the validation paths of manifests: mutated objects through the validator, mutated
// files from Git through the GitOps renderer, and mutated bodies through the store API
// (the world's admission included). Every input must give a clear StraitError (HTTP 4xx
// on the API), never a crash or a 5xx; and nothing invalid may be stored or rendered:
// whatever is accepted passes the store check again and renders without throwing.
// Deterministic PRNG; bounded in count and in time.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { isStraitError } from '../../src/base/errors/index.js';
import { renderManifests } from '../../src/gitops/control/index.js';
import { buildMeshView, sidecarConfigFor } from '../../src/mesh/control/index.js';
import { allKinds, checkStoredObject, validateObject } from '../../src/platform/resources/index.js';
import { openEmbeddedStore, serveStores, type KubeObject } from '../../src/platform/store/index.js';
import { renderProxyRules } from '../../src/world/service-proxy/index.js';
import { clusterIpAdmission, serviceViews } from '../../src/world/supervisor/index.js';
import { prng } from '../helpers/prng.js';

const SEEDS: KubeObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      clusterIP: '100.1.0.20',
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
        { name: 'dns', port: 53, protocol: 'UDP' },
      ],
    },
  },
  {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-x', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true }, hostname: 'web-0' }],
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  },
  {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'DestinationRule',
    metadata: { name: 'dr', namespace: 'mesh' },
    spec: {
      host: 'echo.mesh.svc.cluster.local',
      exportTo: ['.'],
      trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' }, portLevelSettings: [{ port: { number: 8080 }, tls: { mode: 'DISABLE' } }] },
    },
  },
  {
    apiVersion: 'security.istio.io/v1beta1',
    kind: 'PeerAuthentication',
    metadata: { name: 'pa', namespace: 'mesh' },
    spec: { selector: { matchLabels: { app: 'echo' } }, mtls: { mode: 'STRICT' }, portLevelMtls: { 8080: { mode: 'PERMISSIVE' } } },
  },
  {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name: 'echo', namespace: 'default' },
    spec: { type: 'ClusterSetIP', ips: ['100.3.0.5'], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', labels: { a: 'b' } }, data: { k: 'v' } },
  {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: { name: 'app', namespace: 'argocd' },
    spec: { project: 'p', source: { repoURL: 'https://x/y.git', path: 'a' }, destination: { server: 'https://kubernetes.default.svc', namespace: 'default' } },
  },
];

const NASTY: unknown[] = [
  5,
  -1,
  0,
  65536,
  1.5,
  1e308,
  NaN,
  true,
  null,
  '',
  'x',
  'None',
  '10.1.0.5',
  '010.1.0.5',
  '1.2.3.4 ',
  '1.2.3.4\n}',
  '256.1.1.1',
  '100.1.0.99 . tcp . 1 }\n  chain evil {',
  '*',
  '../../etc',
  'a'.repeat(300),
  'ünïcode',
  '${x}',
  [],
  [1, 'a'],
  {},
  { mode: 'STRICT' },
  { __proto__: { polluted: 1 } },
  { port: 'x' },
  ['10.1.0.5', 5],
];

/** A mutated deep copy: one to four random edits (set a value, delete a key, add a key) along a random path. */
function mutate(rnd: () => number, seed: unknown): unknown {
  const root = structuredClone(seed) as unknown;
  const edits = 1 + (rnd() % 4);
  for (let e = 0; e < edits; e++) {
    let node: unknown = root;
    for (let depth = 0; depth < 6; depth++) {
      if (typeof node !== 'object' || node === null) break;
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const k = keys[rnd() % keys.length]!;
      const child = (node as Record<string, unknown>)[k];
      const action = rnd() % 5;
      if (action === 0 || typeof child !== 'object' || child === null) {
        const op = rnd() % 6;
        if (op === 0 && !Array.isArray(node)) delete (node as Record<string, unknown>)[k];
        else if (op === 1 && !Array.isArray(node)) (node as Record<string, unknown>)[`k${rnd() % 9}`] = NASTY[rnd() % NASTY.length];
        else (node as Record<string, unknown>)[k] = structuredClone(NASTY[rnd() % NASTY.length]);
        break;
      }
      node = child;
    }
  }
  return root;
}

/** Render what the data plane would: proxy rules and DNS from Services and slices, mesh sidecar configurations. */
function renderAccepted(objs: KubeObject[]): void {
  const views = serviceViews(
    objs.filter((o) => o.kind === 'Service'),
    objs.filter((o) => o.kind === 'EndpointSlice'),
  );
  const script = renderProxyRules(views.proxy);
  // only the table's own chains and per-service chains built from DNS labels and numbers
  for (const m of script.matchAll(/\bchain (\S+) \{/g)) {
    assert.match(
      m[1]!,
      /^(services|nat-prerouting|nat-output|nat-postrouting|filter-forward|filter-output|svc_[a-z0-9-]+_[a-z0-9-]+_(tcp|udp)_\d{1,5}(_ep\d+)?)$/,
      script,
    );
  }
  assert.doesNotMatch(script, /evil/);
  const mesh = buildMeshView(objs);
  for (const w of mesh.workloads) sidecarConfigFor(mesh, w);
}

test('fuzz validator: 30k mutated objects are accepted or refused with a StraitError; accepted ones pass the store check and render', () => {
  const rnd = prng(0xa11ce);
  const deadline = Date.now() + 20_000;
  let accepted = 0;
  let n = 0;
  for (; n < 30_000 && Date.now() < deadline; n++) {
    const seed = SEEDS[n % SEEDS.length]!;
    const input = mutate(rnd, seed);
    let out: KubeObject;
    try {
      out = validateObject(input, { source: 'fuzz.yaml', docIndex: 1 });
    } catch (err) {
      assert.ok(isStraitError(err), `non-StraitError for ${JSON.stringify(input).slice(0, 300)}: ${String(err)}`);
      assert.throws(
        () => checkStoredObject(input),
        (e: unknown) => isStraitError(e),
        'the store refuses what apply refuses',
      );
      continue;
    }
    accepted++;
    checkStoredObject(out);
    renderAccepted([out, ...SEEDS.filter((s) => s.kind !== out.kind)]);
  }
  assert.ok(n >= 1000, `only ${n} inputs in the time budget`);
  assert.ok(accepted > 0 && accepted < n, `accepted ${accepted} of ${n}`);
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

test('fuzz GitOps render: 5k mutated manifest files from Git render validated objects or fail with a StraitError', () => {
  const rnd = prng(0x9175);
  const deadline = Date.now() + 15_000;
  let n = 0;
  for (; n < 5000 && Date.now() < deadline; n++) {
    const docs = [mutate(rnd, SEEDS[n % SEEDS.length]), mutate(rnd, SEEDS[(n + 3) % SEEDS.length])];
    let text = docs.map((d) => stringify(d)).join('---\n');
    if (rnd() % 4 === 0) {
      // byte-level damage too: YAML syntax, anchors, tabs
      const chars = [...text];
      for (let i = 0; i < 1 + (rnd() % 5); i++) chars[rnd() % chars.length] = ['{', ':', '\t', '&a', '*a', '\n', '- ', '"', '!!js/function'][rnd() % 9]!;
      text = chars.join('');
    }
    const files = [{ path: 'app/a.yaml', content: text }];
    if (rnd() % 5 === 0)
      files.push({
        path: 'app/kustomization.yaml',
        content: `resources: [a.yaml]\nnamespace: ${['prod', 'Bad_NS', '5'][rnd() % 3]}\ncommonLabels: {x: ${['y', '5', '[1]'][rnd() % 3]}}\n`,
      });
    let objs: KubeObject[];
    try {
      objs = renderManifests(files, 'app');
    } catch (err) {
      assert.ok(isStraitError(err), `non-StraitError: ${String(err)}\n${text.slice(0, 300)}`);
      continue;
    }
    for (const o of objs) checkStoredObject(o);
    renderAccepted(objs);
  }
  assert.ok(n >= 500, `only ${n} inputs in the time budget`);
});

function post(socketPath: string, token: string, method: string, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('fuzz store API: 3k mutated bodies get 200 or a 4xx StraitError, never a 5xx; nothing invalid is stored', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-fuzz-store-'));
  const token = 'fuzz-token-0123456789abcdef';
  const store = openEmbeddedStore({ dir: join(dir, 'a'), admit: clusterIpAdmission('100.1.0.0/16') });
  const socketPath = join(dir, 'store.sock');
  const server = await serveStores({ socketPath, token, stores: new Map([['cluster-a', store]]) });
  try {
    const rnd = prng(0x570e);
    const deadline = Date.now() + 25_000;
    const ops = ['/v1/clusters/cluster-a/apply', '/v1/clusters/cluster-a/apply?dryRun=1', '/v1/clusters/cluster-a/update', '/v1/clusters/cluster-a/status'];
    let n = 0;
    let ok = 0;
    for (; n < 3000 && Date.now() < deadline; n++) {
      const seed = SEEDS[n % SEEDS.length]!;
      let body = JSON.stringify(rnd() % 3 === 0 ? seed : mutate(rnd, seed));
      if (rnd() % 10 === 0) body = body.slice(0, rnd() % body.length);
      const path = ops[rnd() % ops.length]!;
      const r = await post(socketPath, token, path.includes('apply') ? 'POST' : 'PUT', path, body);
      assert.ok(r.status === 200 || (r.status >= 400 && r.status < 500), `HTTP ${r.status} for ${path} ${body.slice(0, 300)}: ${r.body.slice(0, 300)}`);
      if (r.status === 200) ok++;
      else assert.match((JSON.parse(r.body) as { code: string }).code, /^STRAIT_ERR_[A-Z_]+$/);
    }
    assert.ok(n >= 300, `only ${n} requests in the time budget`);
    assert.ok(ok > 0, 'some requests were accepted');
    // every stored object passes the check, and ClusterIPs are unique
    const ips = new Set<string>();
    const stored: KubeObject[] = [];
    for (const k of allKinds()) stored.push(...(await store.list({ apiVersion: k.apiVersion, kind: k.kind })).items);
    for (const o of stored) {
      checkStoredObject(o);
      const ip = (o.spec as { clusterIP?: string } | undefined)?.clusterIP;
      if (o.kind === 'Service' && ip && ip !== 'None') {
        assert.ok(!ips.has(ip), `ClusterIP ${ip} stored twice`);
        ips.add(ip);
      }
    }
    renderAccepted(stored);
  } finally {
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
