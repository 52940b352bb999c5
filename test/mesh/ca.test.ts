// The mesh CA: SPIFFE URI SANs, 24 h default lifetime, verification with node:crypto,
// rotation before expiry (ManualClock), the root ConfigMap published in member namespaces.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../src/base/clock/index.js';
import { E, isStraitError } from '../../src/base/errors/index.js';
import {
  certificateUris,
  CertRotator,
  loadOrCreateCa,
  MeshCa,
  parseSpiffeId,
  publishRootCert,
  ROOT_CERT_CONFIGMAP,
  spiffeId,
  type WorkloadCert,
} from '../../src/mesh/control/index.js';
import type { KubeObject, ResourceStore } from '../../src/platform/store/index.js';
import { waitFor } from '../helpers/wait.js';
import { testCa } from './helpers.js';

test('workload certificate: SPIFFE ID as URI SAN, signed by the root, 24 h by default', () => {
  const ca = testCa();
  const c = ca.issueSync('mesh', 'echo');
  assert.equal(c.spiffeId, 'spiffe://cluster.local/ns/mesh/sa/echo');
  assert.deepEqual(certificateUris(c.certPem), ['spiffe://cluster.local/ns/mesh/sa/echo']);
  const x = new X509Certificate(c.certPem);
  const root = new X509Certificate(ca.rootPem);
  assert.ok(x.checkIssued(root));
  assert.ok(x.verify(root.publicKey));
  assert.equal(x.ca, false);
  assert.equal(root.ca, true);
  // valid from a minute ago (clock skew) until 24 h from now
  const lifetime = Date.parse(x.validTo) - Date.parse(x.validFrom);
  assert.ok(Math.abs(lifetime - (24 * 3600_000 + 60_000)) <= 1000, `lifetime ${lifetime}`);
  assert.ok(x.checkPrivateKey(createPrivateKey(c.keyPem)));
});

test("a foreign CA's certificate does not verify against our root", () => {
  const other = MeshCa.create({ trustDomain: 'cluster.local' });
  const c = other.issueSync('mesh', 'echo');
  assert.equal(new X509Certificate(c.certPem).checkIssued(new X509Certificate(testCa().rootPem)), false);
});

test('the root can be saved and loaded; a mismatched key is refused', () => {
  const ca = testCa();
  const again = MeshCa.load('cluster.local', ca.material());
  assert.equal(again.rootPem, ca.rootPem);
  const other = MeshCa.create();
  assert.throws(
    () => MeshCa.load('cluster.local', { certPem: ca.rootPem, keyPem: other.material().keyPem }),
    (e) => isStraitError(e, 'STRAIT_ERR_MESH_CA_INVALID'),
  );
  assert.throws(
    () => MeshCa.load('cluster.local', { certPem: 'nope', keyPem: 'nope' }),
    (e) => isStraitError(e, 'STRAIT_ERR_MESH_CA_INVALID'),
  );
});

const identityCases: { name: string; ns: string; sa: string; td?: string; ok: boolean }[] = [
  { name: 'plain names', ns: 'mesh', sa: 'echo', ok: true },
  { name: 'upper case namespace', ns: 'Mesh', sa: 'echo', ok: false },
  { name: 'slash in service account', ns: 'mesh', sa: 'a/b', ok: false },
  { name: 'empty service account', ns: 'mesh', sa: '', ok: false },
  { name: 'trust domain with path', ns: 'mesh', sa: 'echo', td: 'a/b', ok: false },
];
for (const c of identityCases) {
  test(`SPIFFE ID: ${c.name}`, () => {
    const f = () => spiffeId({ trustDomain: c.td ?? 'cluster.local', namespace: c.ns, serviceAccount: c.sa });
    if (c.ok) assert.deepEqual(parseSpiffeId(f()), { trustDomain: c.td ?? 'cluster.local', namespace: c.ns, serviceAccount: c.sa });
    else assert.throws(f, (e) => isStraitError(e, 'STRAIT_ERR_MESH_IDENTITY_INVALID'));
  });
}

test('rotation: a new certificate at half the lifetime, before expiry, handed to the proxy', async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const got: WorkloadCert[] = [];
  const r = new CertRotator({ ca: testCa(), namespace: 'mesh', serviceAccount: 'echo', clock, issue: { lifetimeMs: 3600_000 }, onRotate: (c) => got.push(c) });
  await r.start();
  assert.equal(got.length, 1);
  clock.advance(29 * 60_000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(got.length, 1);
  clock.advance(2 * 60_000);
  await waitFor(() => got.length === 2, 5000, 'the rotated certificate');
  assert.equal(got.length, 2, 'rotated at half the lifetime');
  assert.ok((got[1] as WorkloadCert).notAfter > (got[0] as WorkloadCert).notAfter);
  assert.ok((got[1] as WorkloadCert).notBefore.getTime() < (got[0] as WorkloadCert).notAfter.getTime(), 'before the old one expired');
  r.stop();
  clock.advance(10 * 3600_000);
  assert.equal(got.length, 2, 'stop() ends rotation');
});

test('root ConfigMap istio-ca-root-cert/root-cert.pem is published in member namespaces, once', async () => {
  const applied: KubeObject[] = [];
  const objects = new Map<string, KubeObject>();
  const store = {
    async get(_k: unknown, name: string, ns?: string) {
      return objects.get(`${ns}/${name}`);
    },
    async apply(o: KubeObject) {
      applied.push(o);
      objects.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
      return o;
    },
  } as unknown as ResourceStore;
  const changed = await publishRootCert(store, ['mesh', 'other'], testCa().rootPem);
  assert.deepEqual(changed, ['mesh', 'other']);
  assert.equal(applied[0]?.metadata.name, ROOT_CERT_CONFIGMAP);
  assert.equal(ROOT_CERT_CONFIGMAP, 'istio-ca-root-cert');
  assert.equal((applied[0]?.['data'] as Record<string, string>)['root-cert.pem'], testCa().rootPem);
  assert.deepEqual(await publishRootCert(store, ['mesh'], testCa().rootPem), [], 'unchanged root: nothing applied');
});

test('publishRootCert: a member namespace that does not exist is skipped and named, the others still get the ConfigMap (a 404 as a real API server answers it)', async () => {
  const objects = new Map<string, KubeObject>();
  const namespaces = new Set(['mesh']);
  const store = {
    async get(k: { kind: string }, name: string, ns?: string) {
      return k.kind === 'Namespace' ? (namespaces.has(name) ? { metadata: { name } } : undefined) : objects.get(`${ns}/${name}`);
    },
    async apply(o: KubeObject) {
      if (!namespaces.has(o.metadata.namespace ?? '')) throw E.notFound('ConfigMap', o.metadata.name, o.metadata.namespace);
      objects.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
      return o;
    },
  } as unknown as ResourceStore;
  const missing: string[] = [];
  assert.deepEqual(await publishRootCert(store, ['gone', 'mesh'], testCa().rootPem, missing), ['mesh']);
  assert.deepEqual(missing, ['gone']);
  assert.ok(objects.get(`mesh/${ROOT_CERT_CONFIGMAP}`), 'the existing member got it');
  // a 404 for another reason (the namespace exists) is not swallowed
  namespaces.add('other');
  const failing = { ...store, apply: async () => Promise.reject(E.notFound('ConfigMap', ROOT_CERT_CONFIGMAP, 'other')) } as unknown as ResourceStore;
  await assert.rejects(publishRootCert(failing, ['other'], testCa().rootPem), /STRAIT_ERR_NOT_FOUND|not found/);
});

test('issue(): an ECDSA P-256 workload key by default, RSA 2048 on request, both signed by the RSA root', async () => {
  const ca = testCa();
  const root = new X509Certificate(ca.rootPem);
  for (const [keyType, want] of [
    [undefined, 'ec'],
    ['ec-p256', 'ec'],
    ['rsa-2048', 'rsa'],
  ] as const) {
    const c = await ca.issue('mesh', 'echo', keyType ? { keyType } : {});
    const x = new X509Certificate(c.certPem);
    assert.equal(x.publicKey.asymmetricKeyType, want, `${keyType}`);
    if (want === 'ec') assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(x.checkIssued(root) && x.verify(root.publicKey), `${keyType} verifies against the root`);
    assert.ok(x.checkPrivateKey(createPrivateKey(c.keyPem)));
    assert.deepEqual(certificateUris(c.certPem), ['spiffe://cluster.local/ns/mesh/sa/echo']);
  }
  await assert.rejects(ca.issue('Mesh', 'echo'), (e) => isStraitError(e, 'STRAIT_ERR_MESH_IDENTITY_INVALID'));
});

test('issue() keeps the event loop responsive: a 5 ms timer keeps firing while 20 RSA certificates are issued', async () => {
  // Before, each issue made its RSA key synchronously and signed in forge's JavaScript RSA:
  // 20 certificates held the loop for their whole duration (0.4-0.7 s each on a loaded
  // machine), so the timer could not fire at all until the last one was done. Judged
  // relative to how long the issuing took, so that a busy machine does not fail it.
  const ca = testCa();
  let ticks = 0;
  let gap = 0;
  let last = performance.now();
  const iv = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    ticks++;
  }, 5);
  const t0 = performance.now();
  const issuing = Promise.all(Array.from({ length: 20 }, (_, i) => ca.issue('mesh', `w${i}`, { keyType: 'rsa-2048' })));
  const certs = await issuing.finally(() => clearInterval(iv));
  const took = performance.now() - t0;
  assert.equal(new Set(certs.map((c) => c.keyPem)).size, 20);
  // the loop's share of an issue is one native signature and forge's layout: milliseconds
  assert.ok(ticks >= 20, `the timer fired ${ticks} times in ${took.toFixed(0)} ms of issuing`);
  assert.ok(gap < took / 4, `the timer was held up ${gap.toFixed(0)} ms of the ${took.toFixed(0)} ms of issuing`);
});

/** a process that loads or makes the root in `file` and prints whether it made one and the root's digest */
function caProcess(file: string): Promise<{ made: number; root: string }> {
  const mod = new URL('../../src/mesh/control/index.js', import.meta.url).href;
  const code = `import { createHash } from 'node:crypto';
import { MeshCa, loadOrCreateCa } from ${JSON.stringify(mod)};
let made = 0;
const create = MeshCa.create;
MeshCa.create = (o) => { made++; return create.call(MeshCa, o); };
const ca = await loadOrCreateCa(${JSON.stringify(file)});
console.log(JSON.stringify({ made, root: createHash('sha256').update(ca.rootPem).digest('hex') }));`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.on('exit', (c) => (c === 0 ? resolve(JSON.parse(out) as { made: number; root: string }) : reject(new Error(`exit ${c}: ${out}`))));
  });
}

test('the mesh root file: processes that start at once make one root between them and all load it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-ca-file-'));
  try {
    const file = join(dir, 'ca.json');
    const got = await Promise.all(Array.from({ length: 4 }, () => caProcess(file)));
    assert.equal(
      got.reduce((n, g) => n + g.made, 0),
      1,
      `roots made: ${got.map((g) => g.made).join(', ')}`,
    );
    assert.equal(new Set(got.map((g) => g.root)).size, 1);
    assert.equal(existsSync(`${file}.lock`), false, 'the maker released its lock');
    // a restarted process loads the same root and makes none
    const again = await caProcess(file);
    assert.deepEqual(again, { made: 0, root: got[0]?.root });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the mesh root file: a lock left by a process that is gone is taken over; a live maker is waited for', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-ca-file-'));
  try {
    const file = join(dir, 'ca.json');
    // a maker that died holding the lock (pid 2^22 + 1 is above Linux's pid_max: no such process),
    // after writing its root aside
    writeFileSync(`${file}.lock`, String(4_194_305));
    writeFileSync(`${file}.4194305.tmp`, '{"keyPem": "a private key"}');
    const taken = await caProcess(file);
    assert.equal(taken.made, 1);
    assert.equal(existsSync(`${file}.lock`), false);
    assert.equal(existsSync(`${file}.4194305.tmp`), false, "the dead maker's copy of a key is removed");

    // a live maker (a process of this test holds the lock) that writes its root 150 ms later:
    // the other waits for it and makes none
    const maker = spawn('sleep', ['10'], { stdio: 'ignore' });
    const file2 = join(dir, 'ca2.json');
    writeFileSync(`${file2}.lock`, String(maker.pid));
    const waiting = loadOrCreateCa(file2);
    const theirs = MeshCa.create({ trustDomain: 'cluster.local' });
    await new Promise((r) => setTimeout(r, 150));
    writeFileSync(file2, JSON.stringify({ trustDomain: 'cluster.local', ...theirs.material() }));
    const got = await waiting;
    assert.equal(got.rootPem, theirs.rootPem);
    assert.equal(readFileSync(`${file2}.lock`, 'utf8'), String(maker.pid), "the waiter left the live maker's lock alone");
    maker.kill();

    // a lock with this process's own pid is a maker before a restart (its pid reused): taken over
    const file3 = join(dir, 'ca3.json');
    writeFileSync(`${file3}.lock`, String(process.pid));
    const t0 = performance.now();
    const own = await loadOrCreateCa(file3);
    assert.ok(performance.now() - t0 < 5000, 'not waited out');
    assert.equal(JSON.parse(readFileSync(file3, 'utf8')).certPem, own.rootPem);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
