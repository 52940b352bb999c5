// The mesh over the real store: `strait apply` the default world's mesh into an embedded
// store served on a state dir, then `strait mesh describe` / `check` read it back, and the
// MeshController runs against the same store (watch, generated objects, root ConfigMap).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { stateFiles } from '../../src/platform/cli-kit/index.js';
import { MeshController, ROOT_CERT_CONFIGMAP, type PeerAuthentication } from '../../src/mesh/control/index.js';
import { openEmbeddedStore, serveStores, type ResourceStore } from '../../src/platform/store/index.js';
import { testCa } from './helpers.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const manifests = (f: string) => join(root, 'test', 'mesh', 'manifests', f);

function strait(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'bin', 'strait.js'), ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

let dir: string;
let stateDir: string;
let store: ResourceStore;
let server: { close(): Promise<void> };
const S = () => ['--state-dir', stateDir];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strait-mesh-store-'));
  stateDir = join(dir, 'state');
  mkdirSync(stateDir, { recursive: true });
  store = openEmbeddedStore({ dir: join(dir, 'store') });
  const files = stateFiles(stateDir);
  writeFileSync(files.storeToken, 'mesh-test-token\n', { mode: 0o600 });
  server = await serveStores({ socketPath: files.storeSocket, token: 'mesh-test-token', stores: new Map([['cluster-a', store]]) });
});
after(async () => {
  await server.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('strait apply the mesh, then mesh describe reads the store (same text as from files)', async () => {
  const a = await strait(['apply', '-f', manifests('world-mesh.yaml'), '-f', manifests('strict.yaml'), '--cluster', 'cluster-a', ...S()]);
  assert.equal(a.code, 0, a.stderr);
  const r = await strait(['mesh', 'describe', 'cluster-a/mesh/echo', ...S()]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, readFileSync(join(root, 'test', 'mesh', 'golden', 'describe-echo-strict.txt'), 'utf8'));
});

test('mesh check over the store; deleting the DestinationRule turns the warning into an error', async () => {
  const ok = await strait(['mesh', 'check', '--cluster', 'cluster-a', ...S()]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /STRICT_OUT_OF_MESH_CLIENT/);
  const d = await strait(['delete', 'destinationrule', 'default', '-n', 'mesh', '--cluster', 'cluster-a', ...S()]);
  assert.equal(d.code, 0, d.stderr);
  const bad = await strait(['mesh', 'check', '--cluster', 'cluster-a', '-o', 'json', ...S()]);
  assert.equal(bad.code, 1);
  assert.ok((JSON.parse(bad.stdout) as { rule: string }[]).some((f) => f.rule === 'STRICT_PLAINTEXT_CLIENT'));
});

test('mesh describe without a world exits 5', async () => {
  const r = await strait(['mesh', 'describe', 'cluster-a/mesh/echo', '--state-dir', join(dir, 'nowhere')]);
  assert.equal(r.code, 5, r.stderr);
  assert.match(r.stderr, /STRAIT_ERR_WORLD_NOT_RUNNING/);
});

test('the controller on the embedded store: generated PeerAuthentication, root ConfigMap, config per injected pod', async () => {
  const out = join(dir, 'mesh');
  const ctl = new MeshController({ store, ca: testCa(), dir: out });
  try {
    const first = await ctl.start();
    // the world-mesh manifests have a Deployment (no pods yet) and the injected pod client
    assert.deepEqual(first.written.sort(), [join('mesh', 'client.json'), join('mesh', 'echo.json')]);
    const pa = await store.get<PeerAuthentication>({ apiVersion: 'security.istio.io/v1beta1', kind: 'PeerAuthentication' }, 'default', 'istio-system');
    assert.equal(pa?.spec?.mtls?.mode, 'PERMISSIVE');
    const cm = await store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, ROOT_CERT_CONFIGMAP, 'mesh');
    assert.equal((cm?.['data'] as Record<string, string>)['root-cert.pem'], testCa().rootPem);
    assert.equal(JSON.parse(readFileSync(join(out, 'mesh', 'echo.json'), 'utf8')).inbound.defaultMode, 'STRICT');
    // a change through the store's watch reaches the file
    await store.apply({
      apiVersion: 'security.istio.io/v1beta1',
      kind: 'PeerAuthentication',
      metadata: { name: 'default', namespace: 'mesh' },
      spec: { mtls: { mode: 'DISABLE' } },
    });
    let mode = '';
    for (let i = 0; i < 200 && mode !== 'DISABLE'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      mode = JSON.parse(readFileSync(join(out, 'mesh', 'echo.json'), 'utf8')).inbound.defaultMode;
    }
    assert.equal(mode, 'DISABLE');
  } finally {
    ctl.stop();
  }
});
