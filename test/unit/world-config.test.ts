// The world file's rules (docs/world.md, World files).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isStraitError, type ErrorCode } from '../../src/base/errors/index.js';
import { DEFAULT_WORLD, loadWorld, parseWorld } from '../../src/world/supervisor/index.js';

const clone = (): { clusters: Record<string, unknown>[] } & Record<string, unknown> => structuredClone(DEFAULT_WORLD) as never;

const cases: { name: string; edit: (w: ReturnType<typeof clone>) => void; code: ErrorCode; match: RegExp }[] = [
  {
    name: 'overlapping cluster CIDRs name both',
    edit: (w) => {
      (w.clusters[1] as { clusterCIDR: string }).clusterCIDR = '10.1.128.0/17';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /world\.clusters\[1\]\.clusterCIDR: "10\.1\.128\.0\/17" overlaps world\.clusters\[0\]\.clusterCIDR "10\.1\.0\.0\/16"/,
  },
  {
    name: "service CIDR overlapping another cluster's cluster CIDR",
    edit: (w) => {
      (w.clusters[1] as { serviceCIDR: string }).serviceCIDR = '10.1.0.0/16';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /world\.clusters\[1\]\.serviceCIDR: "10\.1\.0\.0\/16" overlaps world\.clusters\[0\]\.clusterCIDR/,
  },
  {
    name: 'unknown key refused',
    edit: (w) => {
      (w.clusters[0] as Record<string, unknown>)['podCIDR'] = '10.9.0.0/16';
    },
    code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY',
    match: /"podCIDR"/,
  },
  {
    name: 'unknown top-level key refused',
    edit: (w) => {
      w['brokr'] = {};
    },
    code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY',
    match: /"brokr"/,
  },
  {
    name: 'a bad node role lists the allowed ones',
    edit: (w) => {
      ((w.clusters[0] as { nodes: { role: string }[] }).nodes[0] as { role: string }).role = 'gatewy';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /world\.clusters\[0\]\.nodes\[0\]\.role: "gatewy" must be one of: gateway, worker/,
  },
  {
    name: 'bad CIDR quoted',
    edit: (w) => {
      (w.clusters[0] as { clusterCIDR: string }).clusterCIDR = '10.1/16';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /"10\.1\/16"/,
  },
  {
    name: 'host bits set',
    edit: (w) => {
      (w.clusters[0] as { clusterCIDR: string }).clusterCIDR = '10.1.0.1/16';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /host bits set/,
  },
  {
    name: 'no gateway node',
    edit: (w) => {
      (w.clusters[0] as { nodes: unknown[] }).nodes = [
        { name: 'w1', role: 'worker' },
        { name: 'w2', role: 'worker' },
      ];
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /exactly one or two nodes with role "gateway"/,
  },
  {
    name: 'three gateway nodes',
    edit: (w) => {
      (w.clusters[0] as { nodes: unknown[] }).nodes = ['g1', 'g2', 'g3', 'w'].map((name, i) => ({ name, role: i < 3 ? 'gateway' : 'worker' }));
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /"3 gateway nodes"/,
  },
  {
    name: 'no worker node',
    edit: (w) => {
      (w.clusters[0] as { nodes: unknown[] }).nodes = [
        { name: 'g1', role: 'gateway' },
        { name: 'g2', role: 'gateway' },
      ];
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /at least one node with role "worker"/,
  },
  {
    name: 'duplicate cluster name',
    edit: (w) => {
      (w.clusters[1] as { name: string }).name = 'cluster-a';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /"cluster-a" is used by two clusters/,
  },
  {
    name: 'pod on an unknown node',
    edit: (w) => {
      ((w.clusters[0] as { workloads: { pods: { node: string }[] }[] }).workloads[0]?.pods[0] as { node: string }).node = 'nowhere';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /"nowhere" is not a node of cluster-a/,
  },
  {
    name: 'unknown image',
    edit: (w) => {
      ((w.clusters[0] as { workloads: { pods: { image: string }[] }[] }).workloads[0]?.pods[0] as { image: string }).image = 'nginx';
    },
    code: 'STRAIT_ERR_WORLD_INVALID',
    match: /"nginx"/,
  },
];

for (const c of cases) {
  test(`world file: ${c.name}`, () => {
    const w = clone();
    c.edit(w);
    assert.throws(
      () => parseWorld(w),
      (err) => {
        assert.ok(isStraitError(err, c.code), `${(err as Error).message}`);
        assert.match((err as Error).message, c.match);
        return true;
      },
    );
  });
}

test('world file: the default world is valid, frozen and has defaults applied', () => {
  const w = parseWorld(DEFAULT_WORLD);
  assert.equal(w.clusters.length, 2);
  assert.equal(w.internetCIDR, '198.18.0.0/16');
  assert.equal(w.clusters[0]?.nodeCIDRMaskSize, 24);
  assert.ok(Object.isFrozen(w.clusters[0]));
});

test('world file: YAML from disk; errors name the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-wf-'));
  const good = join(dir, 'good.yaml');
  writeFileSync(
    good,
    `clusters:
  - name: solo
    clusterCIDR: 10.7.0.0/16
    serviceCIDR: 100.7.0.0/16
    nodes: [{ name: gw, role: gateway }, { name: w1, role: worker }, { name: w2, role: worker }]
    workloads:
      - namespace: shop
        deployments: [{ name: web, image: strait/echo, replicas: 3 }]
        services: [{ name: web, ports: [{ port: 80, targetPort: 8080 }] }, { name: web-headless, headless: true, selector: { app: web }, ports: [{ port: 8080 }] }]
`,
  );
  const w = loadWorld(good);
  assert.equal(w.clusters[0]?.workloads[0]?.deployments[0]?.replicas, 3);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'clusters: [ {');
  assert.throws(
    () => loadWorld(bad),
    (err) => isStraitError(err, 'STRAIT_ERR_WORLD_PARSE') && err.message.includes(bad) && /line 1, column \d+: /.test(err.message),
  );
  // a typo names the unknown key and the right one, not the whole object
  const typo = join(dir, 'typo.yaml');
  writeFileSync(typo, 'clusters:\n  - name: cluster-a\n    clustrCIDR: 10.1.0.0/16\n    serviceCIDR: 100.1.0.0/16\n');
  assert.throws(
    () => loadWorld(typo),
    (err) =>
      isStraitError(err, 'STRAIT_ERR_CONFIG_UNKNOWN_KEY') &&
      err.message === `unknown configuration key "clustrCIDR" at ${typo}: world.clusters[0]; did you mean "clusterCIDR"?`,
  );
  const missing = join(dir, 'missing-key.yaml');
  writeFileSync(missing, 'clusters:\n  - name: cluster-a\n    serviceCIDR: 100.1.0.0/16\n');
  assert.throws(
    () => loadWorld(missing),
    (err) =>
      isStraitError(err, 'STRAIT_ERR_WORLD_INVALID') && err.message === `invalid world at ${missing}: world.clusters[0]: "clusterCIDR" is required and missing`,
  );
  const indent = join(dir, 'indent.yaml');
  writeFileSync(indent, 'clusters:\n  - name: a\n    clusterCIDR: [\n');
  assert.throws(
    () => loadWorld(indent),
    (err) => isStraitError(err, 'STRAIT_ERR_WORLD_PARSE') && /line \d+, column \d+: /.test(err.message),
  );
  assert.throws(
    () => loadWorld(join(dir, 'missing.yaml')),
    (err) => isStraitError(err, 'STRAIT_ERR_FILE_UNREADABLE'),
  );
});
