// ServiceExport and ServiceImport in multicluster.x-k8s.io/v1alpha1 and v1beta1: one schema,
// one storage version, and every object readable in either version with nothing lost, in
// the embedded store and in the CRDs strait installs (checked against upstream's CRDs).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { Kinds } from '../../../src/platform/resources/index.js';
import { buildCrds, type KubeObject, type WatchEvent } from '../../../src/platform/store/index.js';
import { newTestStore } from '../../support/stores.js';

const A = 'multicluster.x-k8s.io/v1alpha1';
const B = 'multicluster.x-k8s.io/v1beta1';
const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const mcsApi = process.env['STRAIT_MCS_API_DIR'] ?? resolve(root, '..', 'shared', 'third_party', 'mcs-api');

const withoutVersion = (o: KubeObject | undefined): unknown => {
  if (!o) return o;
  const { apiVersion: _a, ...rest } = o;
  return rest;
};

test('the embedded store serves both versions of a ServiceExport and a ServiceImport, losslessly', async () => {
  const store = newTestStore();
  try {
    const written = await store.apply({
      apiVersion: A,
      kind: 'ServiceExport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { exportedLabels: { tier: 'web' }, exportedAnnotations: { note: 'x' } },
    });
    assert.equal(written.apiVersion, A);
    const withStatus = await store.updateStatus({
      ...written,
      status: {
        conditions: [
          {
            type: 'Valid',
            status: 'False',
            reason: 'AwaitingSync',
            message: 'Awaiting sync of the ServiceImport to the broker',
            lastTransitionTime: '2026-01-02T03:04:05Z',
          },
        ],
      },
    });
    const a = await store.get({ apiVersion: A, kind: 'ServiceExport' }, 'hello', 'default');
    const b = await store.get({ apiVersion: B, kind: 'ServiceExport' }, 'hello', 'default');
    assert.equal(a?.apiVersion, A);
    assert.equal(b?.apiVersion, B);
    assert.deepEqual(withoutVersion(b), withoutVersion(a));
    assert.deepEqual(withoutVersion(a), withoutVersion(withStatus));
    // a v1beta1 writer, a v1alpha1 reader: the same object, status kept
    const updated = await store.apply({
      apiVersion: B,
      kind: 'ServiceExport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { exportedLabels: { tier: 'db' } },
    });
    assert.equal(updated.apiVersion, B);
    const a2 = await store.get({ apiVersion: A, kind: 'ServiceExport' }, 'hello', 'default');
    assert.deepEqual((a2?.spec as { exportedLabels: unknown }).exportedLabels, { tier: 'db' });
    assert.equal((a2?.status as { conditions: { reason: string }[] }).conditions[0]?.reason, 'AwaitingSync');
    assert.deepEqual(
      (await store.list({ apiVersion: B, kind: 'ServiceExport' })).items.map((o) => o.apiVersion),
      [B],
    );
    assert.deepEqual(
      (await store.list({ apiVersion: A, kind: 'ServiceExport' })).items.map((o) => o.apiVersion),
      [A],
    );
    // a watch gets every object in the version it asked for, whoever wrote it in which
    const seen: WatchEvent[] = [];
    const w = store.watch({ apiVersion: B, kind: 'ServiceImport' }, { namespace: 'default' }, (ev) => seen.push(ev));
    await store.apply({
      apiVersion: A,
      kind: 'ServiceImport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        type: 'ClusterSetIP',
        ports: [{ name: 'tcp', protocol: 'TCP', port: 42 }],
        ips: ['242.0.0.1'],
        ipFamilies: ['IPv4'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 30 } },
        internalTrafficPolicy: 'Cluster',
        trafficDistribution: 'PreferClose',
      },
    });
    for (let i = 0; i < 50 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    w.stop();
    assert.equal(seen[0]?.object.apiVersion, B);
    const imp = await store.get({ apiVersion: B, kind: 'ServiceImport' }, 'hello', 'default');
    assert.deepEqual(withoutVersion(imp), withoutVersion(seen[0]?.object));
    assert.equal((imp?.spec as { trafficDistribution: string }).trafficDistribution, 'PreferClose');
  } finally {
    await store.close();
  }
});

test('the CRDs serve v1alpha1 and v1beta1 with one schema and v1beta1 stored, as upstream does', () => {
  const crds = buildCrds();
  for (const kind of ['ServiceExport', 'ServiceImport'] as const) {
    assert.equal(Kinds[kind].apiVersion, A, 'strait reads and writes v1alpha1');
    const crd = crds.find((c) => (c.spec as { names: { kind: string } }).names.kind === kind)!;
    const spec = crd.spec as { versions: { name: string; served: boolean; storage: boolean; schema: unknown }[]; conversion?: unknown };
    assert.deepEqual(
      spec.versions.map((v) => [v.name, v.served, v.storage]),
      [
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ],
    );
    assert.deepEqual(spec.versions[0]!.schema, spec.versions[1]!.schema);
    assert.equal(spec.conversion, undefined, 'conversion strategy None: the schemas are the same');
  }
});

test("every field of upstream's MCS CRDs is in strait's (both versions)", (t) => {
  const dir = join(mcsApi, 'config', 'crd');
  if (!existsSync(dir)) return t.skip(`no mcs-api snapshot at ${mcsApi} (STRAIT_MCS_API_DIR)`);
  const ours = buildCrds();
  type Props = { properties?: Record<string, Props>; items?: Props };
  const paths = (s: Props | undefined, at: string, out: string[]): string[] => {
    for (const [k, v] of Object.entries(s?.properties ?? {})) {
      if (at === '' && ['apiVersion', 'kind', 'metadata'].includes(k)) continue;
      out.push(`${at}${k}`);
      paths(v, `${at}${k}.`, out);
      if (v.items) paths(v.items, `${at}${k}[].`, out);
    }
    return out;
  };
  for (const file of ['multicluster.x-k8s.io_serviceexports.yaml', 'multicluster.x-k8s.io_serviceimports.yaml']) {
    const up = parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((d) => d.toJS() as KubeObject)
      .find((d) => d?.kind === 'CustomResourceDefinition')!;
    const upSpec = up.spec as { names: { kind: string }; versions: { name: string; storage: boolean; schema: { openAPIV3Schema: Props } }[] };
    const mine = ours.find((c) => (c.spec as { names: { kind: string } }).names.kind === upSpec.names.kind)!;
    const mySpec = mine.spec as typeof upSpec;
    assert.deepEqual(
      mySpec.versions.map((v) => [v.name, v.storage]),
      upSpec.versions.map((v) => [v.name, v.storage]),
    );
    for (const v of upSpec.versions) {
      const have = new Set(paths(mySpec.versions.find((x) => x.name === v.name)!.schema.openAPIV3Schema, '', []));
      // upstream's condition fields (metav1.Condition) beyond strait's, which its schema keeps (preserve-unknown)
      const missing = paths(v.schema.openAPIV3Schema, '', []).filter((p) => !have.has(p) && !/conditions\[\]\.observedGeneration$/.test(p));
      assert.deepEqual(missing, [], `${upSpec.names.kind} ${v.name}`);
    }
  }
});
