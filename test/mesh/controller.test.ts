// The mesh controller end to end on loopback: resources in a store → sidecar config files
// → a real sidecar process that re-reads them → curl. Measures how long a PeerAuthentication
// change takes from apply() to enforcement, without restarting anything.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import {
  ingressConfigFor,
  MeshController,
  ROOT_CERT_CONFIGMAP,
  buildMeshView,
  type DestinationRule,
  type PeerAuthentication,
} from '../../src/mesh/control/index.js';
import { curl, startEchoApp, testCa, type EchoApp } from './helpers.js';
import { openEmbeddedStore, type ResourceStore } from '../../src/platform/store/index.js';
import { pa, pod, smcp, smmr, svc } from './fixtures.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
let store: ResourceStore;
let ctl: MeshController;
let dir: string;
let app: EchoApp;
let sidecar: ChildProcess;
let inbound: number;

before(async () => {
  store = openEmbeddedStore({ dir: mkdtempSync(join(tmpdir(), 'strait-meshctl-store-')) });
  for (const o of [
    smcp('istio-system', { mtls: false, automtls: false, cp: false }),
    smmr('istio-system', ['mesh']),
    pod('mesh', 'echo-1', { labels: { app: 'echo' }, inject: 'annotation', ip: '127.0.0.1', sa: 'echo', port: 8080 }),
    pod('mesh', 'outsider', {}),
    svc('mesh', 'echo', 8080, { clusterIP: '10.96.0.20' }),
  ])
    await store.apply(o);
  dir = mkdtempSync(join(tmpdir(), 'strait-meshctl-'));
  ctl = new MeshController({ store, ca: testCa(), dir });
  const first = await ctl.start();
  assert.deepEqual(first.written, [join('mesh', 'echo-1.json')]);
  app = await startEchoApp();
  sidecar = spawn(
    process.execPath,
    [
      join(root, 'dist', 'agents', 'sidecar', 'main.js'),
      '--config',
      join(dir, 'mesh', 'echo-1.json'),
      '--bind',
      '127.0.0.1',
      '--inbound-port',
      '0',
      '--outbound-port',
      '0',
      '--admin',
      '127.0.0.1:0',
      '--app',
      `127.0.0.1:${app.port}`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STRAIT_LOG_LEVEL: 'warn' } },
  );
  inbound = JSON.parse(await new Promise<string>((r) => createInterface({ input: sidecar.stdout! }).once('line', r)))['inbound'];
});
after(async () => {
  ctl.stop();
  await store.close();
  sidecar.kill('SIGTERM');
  await new Promise((r) => sidecar.once('exit', r));
  await app.close();
});

function probe(): Promise<'reset' | 'ok'> {
  return new Promise((resolve) => {
    const s = connect(inbound, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    s.once('data', () => {
      s.destroy();
      resolve('ok');
    });
    s.once('error', () => resolve('reset'));
    s.once('close', () => resolve('reset'));
  });
}

test('only injected pods get a config; the root ConfigMap is in the member namespaces', async () => {
  assert.deepEqual(ctl.files(), [join('mesh', 'echo-1.json')]);
  const cfg = JSON.parse(readFileSync(join(dir, 'mesh', 'echo-1.json'), 'utf8'));
  assert.equal(cfg.inbound.defaultMode, 'PERMISSIVE', 'SMCP flags false: generated PERMISSIVE default');
  assert.match(cfg.identity.certPem, /BEGIN CERTIFICATE/);
  const cm = await store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, ROOT_CERT_CONFIGMAP, 'mesh');
  assert.equal((cm?.['data'] as Record<string, string>)['root-cert.pem'], testCa().rootPem);
});

test('PeerAuthentication STRICT applied to the store reaches the running sidecar (measured)', async () => {
  assert.equal((await curl([`http://127.0.0.1:${inbound}/`])).code, '200');
  const t0 = performance.now();
  await store.apply(pa('mesh', 'default', 'STRICT'));
  let ms = -1;
  for (let i = 0; i < 3000; i++) {
    if ((await probe()) === 'reset') {
      ms = performance.now() - t0;
      break;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  assert.ok(ms >= 0, 'STRICT never took effect');
  console.log(`# PeerAuthentication STRICT enforced ${ms.toFixed(1)} ms after apply (store → controller → file → sidecar)`);
  const r = await curl([`http://127.0.0.1:${inbound}/`]);
  assert.equal(r.exit, 56, r.stderr);
  await store.delete({ apiVersion: 'security.istio.io/v1beta1', kind: 'PeerAuthentication' }, 'default', 'mesh');
  for (let i = 0; i < 3000 && (await probe()) !== 'ok'; i++) await new Promise((r2) => setTimeout(r2, 1));
  assert.equal((await curl([`http://127.0.0.1:${inbound}/`])).code, '200', 'deleting the policy brings PERMISSIVE back');
  assert.equal(sidecar.exitCode, null, 'no restart');
});

test('a pod that loses injection loses its config file', async () => {
  await store.apply(pod('mesh', 'extra', { inject: 'label' }));
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(existsSync(join(dir, 'mesh', 'extra.json')));
  await store.update(pod('mesh', 'extra', {})); // replace: the inject label is gone
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(!existsSync(join(dir, 'mesh', 'extra.json')));
});

test('ingress config: TLS toward echo follows the rules for the gateway namespace', async () => {
  const objs = [
    smcp('istio-system', { mtls: true }),
    smmr('istio-system', ['mesh']),
    pod('mesh', 'echo-1', { labels: { app: 'echo' }, inject: 'annotation', sa: 'echo' }),
    svc('mesh', 'echo', 8080, { clusterIP: '10.96.0.20' }),
  ];
  const cfg = ingressConfigFor(buildMeshView(objs), [{ pathPrefix: '/', namespace: 'mesh', service: 'echo', port: 8080 }], {
    namespace: 'istio-system',
    serviceAccount: 'istio-ingressgateway-service-account',
  });
  assert.deepEqual(cfg.routes, [
    {
      pathPrefix: '/',
      service: 'echo.mesh',
      backend: { host: '10.96.0.20', port: 8080 },
      tls: { mode: 'ISTIO_MUTUAL', sans: ['spiffe://cluster.local/ns/mesh/sa/echo'] },
    },
  ]);
  const off = ingressConfigFor(
    buildMeshView([(objs[0] = smcp('istio-system', { mtls: false, automtls: false })), ...objs.slice(1)]),
    [{ pathPrefix: '/', namespace: 'mesh', service: 'echo', port: 8080 }],
    { namespace: 'istio-system', serviceAccount: 'gw' },
  );
  assert.equal(off.routes[0]?.tls.mode, 'DISABLE');
});

test("the operator's generated objects are kept in the store and follow the SMCP flags", async () => {
  const PA = { apiVersion: 'security.istio.io/v1beta1', kind: 'PeerAuthentication' };
  const DR = { apiVersion: 'networking.istio.io/v1beta1', kind: 'DestinationRule' };
  const settle = async (pred: () => Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await pred()); i++) await new Promise((r) => setTimeout(r, 20));
  };
  assert.equal((await store.get<PeerAuthentication>(PA, 'default', 'istio-system'))?.spec?.mtls?.mode, 'PERMISSIVE');
  assert.equal(await store.get(DR, 'default', 'istio-system'), undefined);
  await store.apply(smcp('istio-system', { mtls: true, automtls: false, cp: false }));
  await settle(async () => (await store.get(DR, 'default', 'istio-system')) !== undefined);
  assert.equal((await store.get<PeerAuthentication>(PA, 'default', 'istio-system'))?.spec?.mtls?.mode, 'STRICT');
  assert.equal((await store.get<DestinationRule>(DR, 'default', 'istio-system'))?.spec?.trafficPolicy?.tls?.mode, 'ISTIO_MUTUAL');
  await store.apply(smcp('istio-system', { mtls: false, automtls: false, cp: false }));
  await settle(async () => (await store.get(DR, 'default', 'istio-system')) === undefined);
  assert.equal(await store.get(DR, 'default', 'istio-system'), undefined);
  assert.equal((await store.get<PeerAuthentication>(PA, 'default', 'istio-system'))?.spec?.mtls?.mode, 'PERMISSIVE');
});

test('certificates rotate at half their lifetime and the new one goes out in the config', async () => {
  const s2 = openEmbeddedStore({ dir: mkdtempSync(join(tmpdir(), 'strait-rotate-store-')) });
  for (const o of [pod('mesh', 'r', { inject: 'label', sa: 'r' })]) await s2.apply(o);
  const d2 = mkdtempSync(join(tmpdir(), 'strait-rotate-'));
  const c2 = new MeshController({ store: s2, ca: testCa(), dir: d2, workloadLifetimeMs: 8000 });
  try {
    await c2.start();
    const read = () => JSON.parse(readFileSync(join(d2, 'mesh', 'r.json'), 'utf8')).identity.certPem as string;
    const first = read();
    for (let i = 0; i < 300 && read() === first; i++) await new Promise((r) => setTimeout(r, 50));
    const seenAt = Date.now();
    const second = read();
    assert.notEqual(second, first, 'a new certificate was written');
    const { X509Certificate } = await import('node:crypto');
    assert.ok(Date.parse(new X509Certificate(second).validTo) > Date.parse(new X509Certificate(first).validTo));
    assert.ok(Date.parse(new X509Certificate(first).validTo) + 1000 > seenAt, 'rotated before the old one expired');
  } finally {
    c2.stop();
    await s2.close();
  }
});
