// Multicluster in Kubernetes mode (docs/kubernetes.md), against a real kube-apiserver: the multicluster agent runs
// unchanged on the Kubernetes store. A ServiceExport gets its Valid condition (True
// once synced to the broker), and the ServiceImport and EndpointSlice it writes pass
// the API server's validation.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MC_KINDS as K, MulticlusterAgent, type Condition } from '../../src/multicluster/control/clusterset/index.js';
import { openEmbeddedStore, openKubernetesStore, type KubernetesResourceStore, type ResourceStore } from '../../src/platform/store/index.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';
import { installCrds } from '../k8s/store-harness.js';

let cluster: TestCluster | undefined;
let skip: string | undefined;
let local: KubernetesResourceStore;
let broker: ResourceStore;
let brokerDir: string | undefined;
let agent: MulticlusterAgent | undefined;

before(
  async () => {
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
    installCrds(cluster);
    local = openKubernetesStore({ kubeconfig: cluster.kubeconfig });
    brokerDir = mkdtempSync(join(tmpdir(), 'strait-broker-'));
    broker = openEmbeddedStore({ dir: brokerDir });
    agent = new MulticlusterAgent({ clusterId: 'cluster-a', local, broker, resyncMs: 1000 });
    agent.start();
  },
  { timeout: 3_600_000 },
);

after(async () => {
  await agent?.stop();
  await local?.close();
  await broker?.close();
  if (brokerDir) rmSync(brokerDir, { recursive: true, force: true });
  await cluster?.stop();
});

test('a ServiceExport in the real API server gets Valid=True once synced to the broker', { timeout: 120_000 }, async (t) => {
  if (!cluster) return t.skip(skip);
  const svc = cluster.kubectl(['create', 'service', 'clusterip', 'nginx', '--tcp=8080:8080', '-n', 'default']);
  assert.equal(svc.status, 0, svc.stderr);
  const ex = cluster.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name: 'nginx', namespace: 'default' } }),
  );
  assert.equal(ex.status, 0, ex.stderr);
  let valid: Condition | undefined;
  for (let i = 0; i < 300 && valid?.status !== 'True'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const r = cluster.kubectl(['get', 'serviceexports.multicluster.x-k8s.io', 'nginx', '-n', 'default', '-o', 'json']);
    valid = ((JSON.parse(r.stdout) as { status?: { conditions?: Condition[] } }).status?.conditions ?? []).find((c) => c.type === 'Valid');
  }
  assert.equal(valid?.status, 'True', JSON.stringify(valid));
  assert.match(valid?.message ?? '', /synced to the broker/);
  // the broker holds the export; the local cluster gets the ServiceImport back
  const imports = await broker.list(K.ServiceImport);
  assert.ok(imports.items.length >= 1, 'the broker has a ServiceImport');
  for (let i = 0; i < 100; i++) {
    if ((await local.list(K.ServiceImport, { namespace: 'default' })).items.length > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(
    cluster.kubectl(['get', 'serviceimports.multicluster.x-k8s.io', '-n', 'default', '-o', 'name']).stdout.trim().split('\n').filter(Boolean).length >= 1,
    true,
  );
});
