// The sidecar-injection webhook's mutation, without an API server: named cases, the
// patch applied to the pod, and a bounded fuzz of the AdmissionReview decoder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import {
  EXCLUDE_INBOUND_ANNOTATION,
  INIT_CONTAINER,
  PROXY_CONTAINER,
  ROOT_DIR,
  STATUS_ANNOTATION,
  TOKEN_AUDIENCE,
  TOKEN_DIR,
  excludedInboundPorts,
  reviewAdmission,
  sidecarContainers,
  sidecarPatch,
  type JsonPatchOp,
} from '../../src/mesh/control/sidecar-injector/index.js';

const opts = { image: 'strait:test' };
type Pod = {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: { name: string }[]; initContainers?: { name: string }[] };
};
const pod = (meta: Partial<Pod['metadata']> = {}, spec: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: 'p', ...meta },
  spec: { containers: [{ name: 'app' }], ...spec },
});

/** RFC 6902 "add" as the API server applies it (enough for these patches). */
function applyPatch(doc: unknown, ops: JsonPatchOp[]): unknown {
  const out = structuredClone(doc) as Record<string, unknown>;
  for (const op of ops) {
    const parts = op.path
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let cur: Record<string, unknown> | unknown[] = out;
    for (const p of parts.slice(0, -1)) cur = (cur as Record<string, unknown>)[p] as Record<string, unknown>;
    const last = parts.at(-1)!;
    if (Array.isArray(cur)) cur.splice(last === '-' ? cur.length : Number(last), 0, op.value);
    else cur[last] = op.value;
  }
  return out;
}

const names = (p: unknown, field: 'containers' | 'initContainers'): string[] => ((p as Pod).spec[field] ?? []).map((c) => c.name);

const cases: { name: string; pod: Pod; containers: string[]; init: string[] }[] = [
  {
    name: 'label inject=true injects',
    pod: pod({ labels: { 'sidecar.istio.io/inject': 'true' } }),
    containers: ['app', PROXY_CONTAINER],
    init: [INIT_CONTAINER],
  },
  {
    name: 'annotation inject=true injects',
    pod: pod({ annotations: { 'sidecar.istio.io/inject': 'true' } }),
    containers: ['app', PROXY_CONTAINER],
    init: [INIT_CONTAINER],
  },
  {
    name: 'label false wins over annotation true',
    pod: pod({ labels: { 'sidecar.istio.io/inject': 'false' }, annotations: { 'sidecar.istio.io/inject': 'true' } }),
    containers: ['app'],
    init: [],
  },
  { name: 'no label, no annotation: nothing', pod: pod(), containers: ['app'], init: [] },
  {
    name: 'existing init containers are kept, ours appended',
    pod: pod({ labels: { 'sidecar.istio.io/inject': 'true' } }, { initContainers: [{ name: 'migrate' }] }),
    containers: ['app', PROXY_CONTAINER],
    init: ['migrate', INIT_CONTAINER],
  },
  {
    name: 'already injected: nothing (idempotent)',
    pod: pod({ labels: { 'sidecar.istio.io/inject': 'true' } }, { containers: [{ name: 'app' }, { name: PROXY_CONTAINER }] }),
    containers: ['app', PROXY_CONTAINER],
    init: [],
  },
];

for (const c of cases) {
  test(`sidecar patch: ${c.name}`, () => {
    const patched = applyPatch(c.pod, sidecarPatch(c.pod, opts));
    assert.deepEqual(names(patched, 'containers'), c.containers);
    assert.deepEqual(names(patched, 'initContainers'), c.init);
  });
}

test('the injected pod records what was injected in sidecar.istio.io/status, keeping its annotations', () => {
  const p = pod({ labels: { 'sidecar.istio.io/inject': 'true' }, annotations: { keep: 'me' } });
  const patched = applyPatch(p, sidecarPatch(p, opts)) as Pod;
  assert.equal(STATUS_ANNOTATION, 'sidecar.istio.io/status');
  assert.equal(patched.metadata.annotations?.['keep'], 'me');
  assert.deepEqual(JSON.parse(patched.metadata.annotations?.[STATUS_ANNOTATION] ?? '{}'), { initContainers: [INIT_CONTAINER], containers: [PROXY_CONTAINER] });
});

test('reviewAdmission answers with the request uid, allowed, and a base64 JSONPatch only when injecting', () => {
  const review = (object: unknown, operation = 'CREATE') => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation, object },
  });
  const yes = reviewAdmission(review(pod({ labels: { 'sidecar.istio.io/inject': 'true' } })), opts);
  assert.equal(yes.response.uid, 'u-1');
  assert.equal(yes.response.allowed, true);
  assert.equal(yes.response.patchType, 'JSONPatch');
  const ops = JSON.parse(Buffer.from(yes.response.patch!, 'base64').toString('utf8')) as JsonPatchOp[];
  assert.ok(ops.some((o) => o.path === '/spec/containers/-'));
  assert.deepEqual(reviewAdmission(review(pod()), opts).response, { uid: 'u-1', allowed: true });
  assert.deepEqual(reviewAdmission(review(pod({ labels: { 'sidecar.istio.io/inject': 'true' } }), 'UPDATE'), opts).response, { uid: 'u-1', allowed: true });
});

test('fuzz: 20k random and mutated AdmissionReviews never throw anything but StraitError', () => {
  const seed = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'x', kind: { kind: 'Pod' }, operation: 'CREATE', object: pod({ labels: { 'sidecar.istio.io/inject': 'true' } }) },
  };
  const values: unknown[] = [null, 0, -1, 'true', 'x', [], {}, [null], { name: 1 }, true, 1e308, '/'];
  const pick = <T>(a: T[]): T => a[Math.floor(Math.random() * a.length)]!;
  function mutate(v: unknown, depth: number): unknown {
    if (depth > 5 || Math.random() < 0.15) return pick(values);
    if (Array.isArray(v)) return v.map((x) => mutate(x, depth + 1));
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (Math.random() > 0.05) o[k] = Math.random() < 0.7 ? x : mutate(x, depth + 1);
      return o;
    }
    return v;
  }
  let injected = 0;
  for (let i = 0; i < 20_000; i++) {
    const input = i % 10 === 0 ? randomBytes(8).toString('hex') : mutate(seed, 0);
    try {
      if (reviewAdmission(input, opts).response.patch) injected++;
    } catch (e) {
      assert.ok(isStraitError(e, 'STRAIT_ERR_USAGE'), `input ${JSON.stringify(input)} threw ${String(e)}`);
    }
  }
  assert.ok(injected > 0, 'some mutated reviews still inject');
});

test('Kubernetes mode (control): the proxy follows the mesh configuration service with a projected token (audience strait) and the mesh root; volumes added or appended', () => {
  const k = { image: 'strait:test', control: 'https://strait-control.strait-system.svc:15012' };
  type Full = {
    metadata: Pod['metadata'];
    spec: {
      volumes?: {
        name: string;
        projected?: { sources: { serviceAccountToken?: { audience: string; path: string } }[] };
        configMap?: { name: string; optional: boolean };
      }[];
      containers: { name: string; args?: string[]; volumeMounts?: { name: string; mountPath: string }[] }[];
    };
  };
  for (const existing of [undefined, [{ name: 'data' }]]) {
    const p = pod({ labels: { 'sidecar.istio.io/inject': 'true' } }, existing ? ({ volumes: existing } as Partial<Pod['spec']>) : {});
    const patched = applyPatch(p, sidecarPatch(p, k)) as Full;
    assert.deepEqual(
      patched.spec.volumes?.map((v) => v.name),
      [...(existing ? ['data'] : []), 'strait-token', 'strait-root'],
    );
    const token = patched.spec.volumes?.find((v) => v.name === 'strait-token')?.projected?.sources[0]?.serviceAccountToken;
    assert.deepEqual(token && { audience: token.audience, path: token.path }, { audience: TOKEN_AUDIENCE, path: 'token' });
    assert.deepEqual(patched.spec.volumes?.find((v) => v.name === 'strait-root')?.configMap, { name: 'istio-ca-root-cert', optional: true });
    const proxy = patched.spec.containers.find((c) => c.name === PROXY_CONTAINER);
    const args = proxy?.args ?? [];
    assert.equal(args[args.indexOf('--control') + 1], k.control);
    assert.equal(args[args.indexOf('--control-token') + 1], `${TOKEN_DIR}/token`);
    assert.equal(args[args.indexOf('--control-ca') + 1], `${ROOT_DIR}/root-cert.pem`);
    assert.deepEqual(
      proxy?.volumeMounts?.map((m) => m.mountPath),
      [TOKEN_DIR, ROOT_DIR],
    );
  }
  // without control (the world): no volumes, no --control
  const p = pod({ labels: { 'sidecar.istio.io/inject': 'true' } });
  const plain = applyPatch(p, sidecarPatch(p, opts)) as Full;
  assert.equal(plain.spec.volumes, undefined);
  assert.ok(!plain.spec.containers.find((c) => c.name === PROXY_CONTAINER)?.args?.includes('--control'));
});

test("a pod of a namespace outside the mesh gets no sidecar (the AdmissionReview's namespace, then the pod's)", () => {
  const k = { image: 'strait:test', inMesh: (ns: string) => ns === 'mesh' };
  const p = pod({ labels: { 'sidecar.istio.io/inject': 'true' } });
  assert.deepEqual(sidecarPatch(p, k, 'default'), []);
  assert.ok(sidecarPatch(p, k, 'mesh').length > 0);
  const review = (namespace: string) => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'u', namespace, kind: { kind: 'Pod' }, operation: 'CREATE', object: p },
  });
  assert.equal(reviewAdmission(review('default'), k).response.patch, undefined);
  assert.ok(reviewAdmission(review('mesh'), k).response.patch);
});

test('every script the injected containers run exists in dist/ (the image copies dist/agents)', () => {
  const { proxy, init } = sidecarContainers({ image: 'strait:test', control: 'https://x:1' });
  for (const c of [proxy, init] as { command: string[] }[]) {
    const script = c.command.find((a) => a.startsWith('dist/'));
    assert.ok(script, JSON.stringify(c.command));
    assert.ok(existsSync(join(process.env['STRAIT_ROOT'] ?? process.cwd(), script)), `${script} exists`);
  }
});

test("the init container's redirect script (--dry-run): the proxy uid spared, admin/metrics and the given ports excluded; bad ports refused", () => {
  const init = join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'dist', 'agents', 'sidecar', 'init.js');
  const r = spawnSync(process.execPath, [init, '--dry-run', '--proxy-uid', '1337', '--exclude-inbound-ports', '8081,9090'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /meta skuid 1337 return/);
  assert.match(r.stdout, /tcp dport \{ 15000, 15020, 8081, 9090 \} return/);
  assert.match(r.stdout, /meta l4proto tcp redirect to :15006/);
  assert.match(r.stdout, /meta l4proto tcp redirect to :15001/);
  const bad = spawnSync(process.execPath, [init, '--dry-run', '--exclude-inbound-ports', '80;rm'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /STRAIT_ERR_USAGE: --exclude-inbound-ports must be an integer/);
});

test("traffic.sidecar.istio.io/excludeInboundPorts reaches the init container's redirect; a malformed value excludes nothing", () => {
  type Init = { spec: { initContainers: { name: string; args: string[] }[] } };
  const initArgs = (annotations: Record<string, string>): string[] => {
    const p = pod({ labels: { 'sidecar.istio.io/inject': 'true' }, annotations });
    return (applyPatch(p, sidecarPatch(p, opts)) as Init).spec.initContainers.find((c) => c.name === INIT_CONTAINER)?.args ?? [];
  };
  const a = initArgs({ [EXCLUDE_INBOUND_ANNOTATION]: '8081, 9090' });
  assert.equal(a[a.indexOf('--exclude-inbound-ports') + 1], '8081,9090');
  for (const bad of ['80;rm -rf', '0', '70000', 'http']) assert.ok(!initArgs({ [EXCLUDE_INBOUND_ANNOTATION]: bad }).includes('--exclude-inbound-ports'), bad);
  assert.deepEqual(excludedInboundPorts({ metadata: { annotations: { [EXCLUDE_INBOUND_ANNOTATION]: '15021,15021' } } }), [15021]);
});
