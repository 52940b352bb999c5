// `strait show` tables against golden files (test/golden/multicluster/show-*.txt), from
// records in both shapes the reader accepts (strait's gateway records and Submariner's).
// A connection's GATEWAY is the remote gateway's host name, as subctl prints it: the
// connection endpoint's (Submariner's shape) or the remote cluster's Endpoint's (strait's).
// STRAIT_UPDATE_GOLDEN=1 rewrites the files.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  collectShow,
  kubeComponents,
  renderShow,
  SHOW_ALL,
  SHOW_SECTIONS,
  showJson,
  worldComponents,
  type ShowWhat,
} from '../../../src/multicluster/cli/index.js';
import { deployBroker, joinCluster, MC_KINDS as K, OPERATOR_NAMESPACE } from '../../../src/multicluster/control/clusterset/index.js';
import { newTestStore } from '../../support/stores.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

async function fixture() {
  const broker = newTestStore();
  const local = newTestStore();
  const info = await deployBroker(broker, { brokerURL: 'unix:///run/strait/store.sock#broker', cluster: 'cluster-a', now: new Date('2026-01-02T03:04:05Z') });
  await joinCluster({
    broker,
    local,
    info,
    source: 'b',
    network: { clusterId: 'cluster-a', networkPlugin: 'strait', clusterCIDRs: ['10.1.0.0/16'], serviceCIDRs: ['100.1.0.0/16'] },
  });
  // strait's flat record shape (the gateway daemon's endpointRecord / gatewayRecord / connectionRecords)
  await local.apply({
    apiVersion: K.Endpoint.apiVersion,
    kind: 'Endpoint',
    metadata: { name: 'cluster-a-gw', namespace: OPERATOR_NAMESPACE },
    spec: {
      clusterId: 'cluster-a',
      hostname: 'cluster-a-gw',
      endpointIP: '172.16.1.1',
      publicIP: '198.51.100.1',
      cableDriver: 'strait-psk',
      subnets: ['10.1.0.0/16', '100.1.0.0/16'],
      type: 'local',
    },
  });
  // Submariner's shape
  await local.apply({
    apiVersion: K.Endpoint.apiVersion,
    kind: 'Endpoint',
    metadata: { name: 'cluster-b-gw', namespace: OPERATOR_NAMESPACE },
    spec: {
      cluster_id: 'cluster-b',
      hostname: 'cluster-b-gw',
      private_ip: '172.16.2.1',
      public_ip: '198.51.100.2',
      backend: 'libreswan',
      subnets: ['10.2.0.0/16', '100.2.0.0/16'],
    },
  });
  const gw = await local.apply({ apiVersion: K.Gateway.apiVersion, kind: 'Gateway', metadata: { name: 'cluster-a-gw', namespace: OPERATOR_NAMESPACE } });
  await local.updateStatus({
    ...gw,
    status: {
      haStatus: 'active',
      version: '0.1.0',
      connections: [
        {
          gateway: 'cluster-a-gw',
          cluster: 'cluster-b',
          remoteIP: '172.16.2.1',
          nat: 'no',
          cableDriver: 'strait-psk',
          subnets: ['10.2.0.0/16', '100.2.0.0/16'],
          status: 'connected',
          rttAvg: '412µs',
        },
        {
          status: 'connecting',
          usingIP: '172.16.3.1',
          usingNAT: true,
          endpoint: { cluster_id: 'cluster-c', hostname: 'cluster-c-gw1', backend: 'libreswan', subnets: ['10.3.0.0/16'] },
          latencyRTT: { average: 1234567 },
        },
      ],
    },
  });
  const gw2 = await local.apply({ apiVersion: K.Gateway.apiVersion, kind: 'Gateway', metadata: { name: 'cluster-a-gw2', namespace: OPERATOR_NAMESPACE } });
  await local.updateStatus({ ...gw2, status: { haStatus: 'passive', connections: [] } });
  // cluster-b joined too (the broker's Cluster records); an export of cluster-a and what it imports
  const other = newTestStore();
  await joinCluster({
    broker,
    local: other,
    info,
    source: 'b',
    network: { clusterId: 'cluster-b', networkPlugin: 'generic', clusterCIDRs: ['10.2.0.0/16'], serviceCIDRs: ['100.2.0.0/16'] },
  });
  await local.apply({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'echo', namespace: 'default' },
    spec: { type: 'ClusterIP', clusterIP: '100.1.0.10', ports: [{ port: 8080 }] },
  });
  const se = await local.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name: 'echo', namespace: 'default' } });
  await local.updateStatus({
    ...se,
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
  const si = await local.apply({
    apiVersion: K.ServiceImport.apiVersion,
    kind: 'ServiceImport',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      type: 'ClusterSetIP',
      ports: [
        { port: 80, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
      ],
    },
  });
  await local.updateStatus({ ...si, status: { clusters: [{ cluster: 'cluster-c' }, { cluster: 'cluster-b' }] } });
  return { broker, local };
}

for (const what of [...SHOW_SECTIONS, 'all'] as (ShowWhat | 'all')[]) {
  test(`show ${what} matches its golden table`, async () => {
    const { broker, local } = await fixture();
    const data = await collectShow(local, broker, 'cluster-a');
    // the version and the machine's architecture are not part of the golden text
    data.versions = data.versions.map((v) => ({ ...v, configured: 'v9.9.9', running: 'v9.9.9', arch: 'amd64' }));
    const text = renderShow(what === 'all' ? SHOW_ALL : [what], data);
    const file = join(root, 'test', 'golden', 'multicluster', `show-${what}.txt`);
    if (process.env['STRAIT_UPDATE_GOLDEN'] === '1' || !existsSync(file)) writeFileSync(file, text);
    assert.equal(text, readFileSync(file, 'utf8'));
  });
}

test('show versions: three components at the same version; -o json carries every section', async () => {
  const { broker, local } = await fixture();
  const data = await collectShow(local, broker, 'cluster-a');
  assert.equal(data.versions.length, 3);
  assert.equal(new Set(data.versions.map((v) => v.configured)).size, 1);
  const json = showJson(SHOW_ALL, data) as Record<string, unknown>;
  for (const k of SHOW_ALL) assert.ok(k in json, k);
  assert.deepEqual((json['networks'] as { serviceCIDRs: string[] }).serviceCIDRs, ['100.1.0.0/16']);
  assert.equal((json['connections'] as { rttAvg: string }[])[1]!.rttAvg, '1.234567ms');
});

test('show on a cluster without records says so instead of printing empty tables', async () => {
  const data = await collectShow(newTestStore(), undefined, 'cluster-x');
  const text = renderShow(['connections', 'networks'], data);
  assert.match(text, /No connections found/);
  assert.match(text, /has not joined/);
});

test('show versions: RUNNING is empty for a component that does not run, the version for one that does', async () => {
  const idle = await collectShow(newTestStore(), undefined, 'cluster-a');
  assert.deepEqual(
    idle.versions.map((v) => [v.component, v.running]),
    [
      ['strait-gateway', ''],
      ['strait-node-agent', ''],
      ['strait-control', ''],
    ],
  );
  assert.match(renderShow(['versions'], idle), /strait-control\s+localhost\/strait\s+\S+\s+<none>/);
  const world = worldComponents(
    [
      { name: 'cluster-a.gateway.gateway', ready: true },
      { name: 'cluster-a.worker.node-agent', ready: false },
      { name: 'cluster-a.control', ready: true },
      { name: 'cluster-b.worker.node-agent', ready: true },
      { name: 'cluster-a.gateway.mesh-ingress', ready: true },
    ],
    'cluster-a',
  );
  assert.deepEqual([...world.keys()].sort(), ['strait-control', 'strait-gateway']);
  const running = await collectShow(newTestStore(), undefined, 'cluster-a', world);
  assert.deepEqual(
    running.versions.map((v) => v.running === v.configured),
    [true, false, true],
  );
});

test('show clusters, exports, imports: from the cluster\'s own records when the broker cannot be read; "No ... found" when empty', async () => {
  const { local } = await fixture();
  const data = await collectShow(local, undefined, 'cluster-a');
  assert.deepEqual(
    data.clusters.map((c) => [c.clusterId, c.connection]),
    [['cluster-a', 'local']],
  );
  const empty = await collectShow(newTestStore(), undefined, 'cluster-x');
  const text = renderShow(['clusters', 'exports', 'imports'], empty);
  assert.match(text, /No clusters \(the cluster has not joined\) found/);
  assert.match(text, /No service exports found/);
  assert.match(text, /No service imports found/);
  assert.deepEqual(Object.keys(showJson(['exports', 'imports'], data)), ['cluster', 'exports', 'imports']);
});

test("show versions in Kubernetes mode: RUNNING is the image tag of each component's Running pod", async () => {
  const store = newTestStore();
  const pod = (name: string, component: string, image: string, phase: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'strait-system', labels: { 'app.kubernetes.io/name': component } },
    spec: { containers: [{ name: 'c', image }] },
    status: { phase },
  });
  for (const p of [
    pod('gw', 'strait-gateway', 'registry.example:5000/strait:0.2.0', 'Running'),
    pod('agent', 'strait-node-agent', 'strait:0.1.9', 'Pending'),
    pod('control', 'strait-control', 'strait', 'Running'),
    pod('other', 'web', 'nginx:1.27', 'Running'),
  ]) {
    const o = await store.apply(p);
    await store.updateStatus({ ...o, status: p.status });
  }
  const running = await kubeComponents(store);
  assert.deepEqual([...running.entries()].sort(), [
    ['strait-control', 'latest'],
    ['strait-gateway', '0.2.0'],
  ]);
});
