import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import {
  ANN_DERIVED_SERVICE,
  derivedServiceName,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  MC_KINDS as K,
  MulticlusterAgent,
  MulticlusterMetrics,
  BROKER_NAMESPACE,
  type Condition,
} from '../../../src/multicluster/control/clusterset/index.js';
import { ClustersetZone, ZoneSource } from '../../../src/multicluster/control/clusterset-dns/index.js';
import type { KubeObject } from '../../../src/platform/store/index.js';
import { FlakyStore, newTestStore } from '../../support/stores.js';
import type { ResourceStore } from '../../../src/platform/store/index.js';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

const service = (ns: string, name: string, ip: string, port = 8080, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { type: 'ClusterIP', clusterIP: ip, selector: { app: name }, ports: [{ name: 'http', protocol: 'TCP', port, targetPort: port }], ...extra },
});
const exportOf = (ns: string, name: string): KubeObject => ({
  apiVersion: K.ServiceExport.apiVersion,
  kind: 'ServiceExport',
  metadata: { name, namespace: ns },
});
const conds = async (s: ResourceStore, ns: string, name: string) =>
  ((await s.get(K.ServiceExport, name, ns))?.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
const cond = async (s: ResourceStore, ns: string, name: string, type: string) => (await conds(s, ns, name)).find((c) => c.type === type);

function world() {
  const broker = new FlakyStore(newTestStore());
  const a = newTestStore();
  const b = newTestStore();
  const registry = new Registry();
  const metrics = new MulticlusterMetrics(registry);
  const agentA = new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker, metrics, resyncMs: 300 });
  const agentB = new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker, metrics, resyncMs: 300 });
  agentA.start();
  agentB.start();
  return {
    broker,
    a,
    b,
    agentA,
    agentB,
    registry,
    stop: async () => {
      await agentA.stop();
      await agentB.stop();
      await Promise.all([broker.close(), a.close(), b.close()]);
    },
  };
}

test('export in cluster-b: Valid goes AwaitingSync -> True, and both clusters import it with MCS labels', async () => {
  const w = world();
  try {
    // record every status the export passes through
    const seen: Condition[][] = [];
    w.b.watch(K.ServiceExport, {}, (ev) => seen.push((ev.object.status as { conditions?: Condition[] })?.conditions ?? []));
    await w.b.apply(service('default', 'echo', '100.2.0.10'));
    await w.b.apply(exportOf('default', 'echo'));
    const valid = await waitFor('Valid True', async () => {
      const c = await cond(w.b, 'default', 'echo', 'Valid');
      return c?.status === 'True' && c;
    });
    assert.equal(valid.reason, 'ServiceExported');
    assert.match(valid.message, /synced to the broker/);
    assert.match(valid.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const awaiting = seen.flat().find((c) => c.type === 'Valid' && c.status === 'False');
    assert.equal(awaiting?.reason, 'AwaitingSync');
    assert.match(awaiting!.message, /[Aa]waiting sync/);
    assert.equal((await cond(w.b, 'default', 'echo', 'Ready'))?.status, 'True');
    assert.equal((await cond(w.b, 'default', 'echo', 'Conflict'))?.status, 'False');

    for (const s of [w.a, w.b]) {
      const imp = await waitFor('ServiceImport with status', async () => {
        const i = await s.get(K.ServiceImport, 'echo', 'default');
        return i?.status !== undefined && i;
      });
      assert.deepEqual(imp.spec, {
        type: 'ClusterSetIP',
        ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        ipFamilies: ['IPv4'],
        sessionAffinity: 'None',
      });
      assert.deepEqual(imp.status, { clusters: [{ cluster: 'cluster-b' }] });
      const slices = await waitFor('slice', async () => {
        const l = await s.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_SERVICE_NAME}=echo` });
        return l.items.length > 0 && l.items;
      });
      assert.equal(slices[0]!.metadata.labels?.[LABEL_SOURCE_CLUSTER], 'cluster-b');
      assert.deepEqual((slices[0]!['endpoints'] as { addresses: string[] }[])[0]!.addresses, ['100.2.0.10']);
    }
    // the aggregate lives on the broker
    const agg = await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE);
    assert.equal((agg?.spec as { type: string }).type, 'ClusterSetIP');

    // lastTransitionTime does not move when nothing changes status
    await new Promise((r) => setTimeout(r, 700)); // two resyncs
    assert.equal((await cond(w.b, 'default', 'echo', 'Valid'))?.lastTransitionTime, valid.lastTransitionTime);

    const text = await w.registry.metrics();
    assert.match(text, /strait_mc_service_exports\{condition="Valid",status="True"\} 1/);
    assert.match(text, /strait_mc_broker_sync_duration_seconds_count\{direction="export"\} [1-9]/);

    // unexport removes the import everywhere
    await w.b.delete(K.ServiceExport, 'echo', 'default');
    for (const s of [w.a, w.b]) {
      await waitFor('import gone', async () => !(await s.get(K.ServiceImport, 'echo', 'default')));
      assert.equal((await s.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_SERVICE_NAME}=echo` })).items.length, 0);
    }
    assert.equal(await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE), undefined);
  } finally {
    await w.stop();
  }
});

test('an export without its Service, and of an ExternalName service, is invalid with a clear reason', async () => {
  const w = world();
  try {
    await w.a.apply(exportOf('default', 'ghost'));
    const v = await waitFor('ServiceNotFound', async () => {
      const c = await cond(w.a, 'default', 'ghost', 'Valid');
      return c?.reason === 'ServiceNotFound' && c;
    });
    assert.equal(v.status, 'False');
    assert.match(v.message, /default\/ghost.*does not exist/);
    await w.a.apply(service('default', 'ext', '', 80, { type: 'ExternalName', externalName: 'example.org', clusterIP: undefined }));
    await w.a.apply(exportOf('default', 'ext'));
    const u = await waitFor('Unsupported', async () => {
      const c = await cond(w.a, 'default', 'ext', 'Valid');
      return c?.reason === 'UnsupportedServiceType' && c;
    });
    assert.match(u.message, /ExternalName/);
    // creating the missing service makes the export valid
    await w.a.apply(service('default', 'ghost', '100.1.0.20'));
    await waitFor('ghost valid', async () => (await cond(w.a, 'default', 'ghost', 'Valid'))?.status === 'True');
    assert.equal(await w.broker.get(K.EndpointSlice, 'ext.default.cluster-a', BROKER_NAMESPACE), undefined);
  } finally {
    await w.stop();
  }
});

test('conflicting ports across clusters: oldest export wins, Conflict on every constituent export', async () => {
  const w = world();
  try {
    await w.b.apply(service('default', 'echo', '100.2.0.10', 8080));
    await w.b.apply(exportOf('default', 'echo'));
    await waitFor('b valid', async () => (await cond(w.b, 'default', 'echo', 'Valid'))?.status === 'True');
    // creation timestamps have one-second resolution (as in Kubernetes): be clearly younger
    await new Promise((r) => setTimeout(r, 1100));
    await w.a.apply(service('default', 'echo', '100.1.0.10', 9090));
    await w.a.apply(exportOf('default', 'echo'));
    for (const s of [w.a, w.b]) {
      const c = await waitFor('conflict', async () => {
        const x = await cond(s, 'default', 'echo', 'Conflict');
        return x?.status === 'True' && x;
      });
      assert.equal(c.reason, 'ConflictingPorts');
      assert.match(c.message, /cluster-b \(oldest export\)/);
    }
    const imp = await waitFor('import of both', async () => {
      const i = await w.a.get(K.ServiceImport, 'echo', 'default');
      return (i?.status as { clusters: unknown[] })?.clusters.length === 2 && i;
    });
    assert.deepEqual((imp.spec as { ports: unknown }).ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
    // resolving the conflict clears it on both
    await w.a.apply(service('default', 'echo', '100.1.0.10', 8080));
    for (const s of [w.a, w.b]) await waitFor('no conflict', async () => (await cond(s, 'default', 'echo', 'Conflict'))?.status === 'False');
  } finally {
    await w.stop();
  }
});

test('a broker that is down leaves imports in place; everything re-converges when it returns', async () => {
  const w = world();
  try {
    await w.b.apply(service('default', 'echo', '100.2.0.10'));
    await w.b.apply(exportOf('default', 'echo'));
    await waitFor('imported in a', () => w.a.get(K.ServiceImport, 'echo', 'default'));
    const before = await waitFor('b valid', async () => {
      const c = await cond(w.b, 'default', 'echo', 'Valid');
      return c?.status === 'True' && c;
    });

    // cluster-a's clusterset zone, fed from its own store
    const zone = new ClustersetZone('cluster-a');
    const source = new ZoneSource(w.a, zone);
    source.start();
    await waitFor('zone answers', async () => zone.resolve('echo.default.svc.clusterset.local', 1).answers[0]?.address === '100.2.0.10');

    w.broker.setDown(true);
    await new Promise((r) => setTimeout(r, 800)); // resyncs run against a dead broker
    assert.ok(await w.a.get(K.ServiceImport, 'echo', 'default'), 'import kept while the broker is down');
    assert.equal(zone.resolve('echo.default.svc.clusterset.local', 1).answers[0]?.address, '100.2.0.10', 'DNS answer kept while the broker is down');
    assert.equal((await w.a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_SERVICE_NAME}=echo` })).items.length, 1);
    assert.deepEqual(await cond(w.b, 'default', 'echo', 'Valid'), before, 'established export status untouched');

    // changes made while the broker is away
    await w.a.apply(service('default', 'web', '100.1.0.30', 80));
    await w.a.apply(exportOf('default', 'web'));
    await waitFor('web awaiting', async () => (await cond(w.a, 'default', 'web', 'Valid'))?.reason === 'AwaitingSync');
    await w.b.delete(K.ServiceExport, 'echo', 'default');

    w.broker.setDown(false);
    await waitFor('web valid', async () => (await cond(w.a, 'default', 'web', 'Valid'))?.status === 'True', 6000);
    await waitFor('web imported in b', () => w.b.get(K.ServiceImport, 'web', 'default'), 6000);
    await waitFor('echo gone from a', async () => !(await w.a.get(K.ServiceImport, 'echo', 'default')), 6000);
    // ... and the DNS answer follows: the export deleted during the outage is NXDOMAIN now
    await waitFor('echo NXDOMAIN in a', async () => zone.resolve('echo.default.svc.clusterset.local', 1).rcode === 3, 6000);
    source.stop();
  } finally {
    await w.stop();
  }
});

test('headless export carries pod IPs and hostnames', async () => {
  const w = world();
  try {
    await w.b.apply(service('default', 'db', 'None', 5432, { clusterIP: 'None' }));
    for (const [n, ip] of [
      ['db-0', '10.2.1.5'],
      ['db-1', '10.2.1.6'],
    ] as const) {
      await w.b.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: n, namespace: 'default', labels: { app: 'db' } },
        spec: { containers: [{ name: 'db', image: 'strait/echo' }] },
      });
      const p = await w.b.get(K.Pod, n, 'default');
      await w.b.updateStatus({ ...p!, status: { phase: 'Running', podIP: ip } });
    }
    await w.b.apply(exportOf('default', 'db'));
    const imp = await waitFor('headless import', () => w.a.get(K.ServiceImport, 'db', 'default'));
    assert.equal((imp.spec as { type: string }).type, 'Headless');
    const s = await waitFor(
      'slice',
      async () => (await w.a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_SERVICE_NAME}=db` })).items[0],
    );
    assert.deepEqual(s['endpoints'], [
      { addresses: ['10.2.1.5'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['10.2.1.6'], hostname: 'db-1', conditions: { ready: true } },
    ]);
  } finally {
    await w.stop();
  }
});

test("headless export from the cluster's EndpointSlices: a StatefulSet pod's hostname, else the address with dashes, each pod once", async () => {
  const w = world();
  try {
    await w.b.apply(service('default', 'hs', 'None', 42, { clusterIP: 'None' }));
    await w.b.apply({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hs-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'hs' } },
      addressType: 'IPv4',
      ports: [
        { name: 'tcp', protocol: 'TCP', port: 42 },
        { name: 'udp', protocol: 'UDP', port: 42 },
      ],
      endpoints: [
        { addresses: ['10.2.0.9'], hostname: 'web-0', conditions: { ready: true } },
        { addresses: ['10.2.0.8'], conditions: { ready: true } },
      ],
    });
    await w.b.apply(exportOf('default', 'hs'));
    const s = await waitFor(
      'slice',
      async () => (await w.a.list(K.EndpointSlice, { namespace: 'default', labelSelector: `${LABEL_SERVICE_NAME}=hs` })).items[0],
    );
    assert.deepEqual(s['endpoints'], [
      { addresses: ['10.2.0.8'], hostname: '10-2-0-8', conditions: { ready: true } },
      { addresses: ['10.2.0.9'], hostname: 'web-0', conditions: { ready: true } },
    ]);
  } finally {
    await w.stop();
  }
});

test("the ServiceImport carries the Service's affinity, traffic policy, IP families and the export's exported labels and annotations", async () => {
  const w = world();
  try {
    await w.b.apply({
      ...service('default', 'hello', '100.2.0.42', 42, {
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
        internalTrafficPolicy: 'Cluster',
        trafficDistribution: 'PreferClose',
        ipFamilies: ['IPv4'],
      }),
      metadata: { name: 'hello', namespace: 'default', labels: { 'dummy-svc': 'dummy' }, annotations: { 'dummy-svc': 'dummy' } },
    });
    // written by a v1beta1 client, as the MCS conformance suite does
    await w.b.apply({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { exportedLabels: { 'dummy-label': 'true' }, exportedAnnotations: { 'dummy-annotation': 'true' } },
    });
    for (const s of [w.a, w.b]) {
      const imp = await waitFor('import', async () => {
        const i = await s.get({ apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceImport' }, 'hello', 'default');
        return i?.metadata.labels?.['dummy-label'] ? i : undefined;
      });
      assert.equal(imp.apiVersion, 'multicluster.x-k8s.io/v1beta1');
      assert.deepEqual(imp.spec, {
        type: 'ClusterSetIP',
        ports: [{ name: 'http', protocol: 'TCP', port: 42 }],
        ipFamilies: ['IPv4'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
        internalTrafficPolicy: 'Cluster',
        trafficDistribution: 'PreferClose',
      });
      assert.equal(imp.metadata.labels?.['dummy-svc'], undefined, "the Service's own labels stay");
      assert.deepEqual(imp.metadata.annotations, { 'dummy-annotation': 'true', [ANN_DERIVED_SERVICE]: derivedServiceName('default', 'hello') });
    }
    // a label no longer exported goes from the import
    await w.b.apply({
      apiVersion: K.ServiceExport.apiVersion,
      kind: 'ServiceExport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { exportedLabels: null, exportedAnnotations: null },
    });
    await waitFor('labels gone', async () => {
      const i = await w.a.get(K.ServiceImport, 'hello', 'default');
      return i && !i.metadata.labels?.['dummy-label'] && !i.metadata.annotations?.['dummy-annotation'];
    });
  } finally {
    await w.stop();
  }
});

test('KEP conflict rules: added ports are merged and reported; labels, annotations and affinity of the oldest export win; Conflict on each export', async () => {
  const w = world();
  try {
    await w.b.apply(service('default', 'hello', '100.2.0.42', 42, { sessionAffinity: 'ClientIP' }));
    await w.b.apply({
      apiVersion: K.ServiceExport.apiVersion,
      kind: 'ServiceExport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { exportedLabels: { 'dummy-label': 'true' }, exportedAnnotations: { 'dummy-annotation': 'true' } },
    });
    await waitFor('b valid', async () => (await cond(w.b, 'default', 'hello', 'Valid'))?.status === 'True');
    assert.equal((await cond(w.b, 'default', 'hello', 'Conflict'))?.status, 'False');
    await new Promise((r) => setTimeout(r, 1100));
    await w.a.apply({
      ...service('default', 'hello', '100.1.0.42', 42),
      spec: {
        type: 'ClusterIP',
        clusterIP: '100.1.0.42',
        selector: { app: 'hello' },
        ports: [
          { name: 'http', protocol: 'TCP', port: 42 },
          { name: 'stcp', protocol: 'SCTP', port: 142 },
        ],
      },
    });
    await w.a.apply({
      apiVersion: K.ServiceExport.apiVersion,
      kind: 'ServiceExport',
      metadata: { name: 'hello', namespace: 'default' },
      spec: { exportedLabels: { 'dummy-label2': 'true' }, exportedAnnotations: { 'dummy-annotation2': 'true' } },
    });
    for (const s of [w.a, w.b]) {
      const c = await waitFor('conflict', async () => {
        const x = await cond(s, 'default', 'hello', 'Conflict');
        return x?.status === 'True' && x;
      });
      assert.equal(c.reason, 'ConflictingPorts');
      for (const what of ['ports', 'session affinity', 'exported labels', 'exported annotations']) assert.match(c.message, new RegExp(what));
      assert.match(c.message, /cluster-a exports other ports/);
    }
    const imp = await waitFor('import of both', async () => {
      const i = await w.a.get(K.ServiceImport, 'hello', 'default');
      return (i?.status as { clusters: unknown[] })?.clusters.length === 2 && i;
    });
    assert.deepEqual((imp.spec as { ports: unknown }).ports, [
      { name: 'http', protocol: 'TCP', port: 42 },
      { name: 'stcp', protocol: 'SCTP', port: 142 },
    ]);
    assert.equal((imp.spec as { sessionAffinity: string }).sessionAffinity, 'ClientIP');
    assert.equal(imp.metadata.labels?.['dummy-label'], 'true');
    assert.equal(imp.metadata.labels?.['dummy-label2'], undefined);
    assert.deepEqual(imp.metadata.annotations, { 'dummy-annotation': 'true', [ANN_DERIVED_SERVICE]: derivedServiceName('default', 'hello') });
  } finally {
    await w.stop();
  }
});

test("an unexport leaves no ServiceImport on the broker while the broker's watch lags its writes, nor when both clusters withdraw at once", async () => {
  const w = world();
  try {
    // a real API server's watch event comes after the write's answer: the agent's cache still
    // held its own slice when it folded the aggregate again, and wrote the import back
    w.broker.watchDelayMs = 150;
    for (const s of [w.a, w.b]) {
      await s.apply(service('default', 'echo', s === w.a ? '100.1.0.10' : '100.2.0.10'));
      await s.apply(exportOf('default', 'echo'));
    }
    const both = await waitFor('aggregate of both clusters', async () => {
      const i = await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE);
      return (i?.status as { clusters?: unknown[] } | undefined)?.clusters?.length === 2 && i;
    });
    assert.ok(both);

    await w.b.delete(K.ServiceExport, 'echo', 'default');
    await waitFor('aggregate of cluster-a alone', async () => {
      const i = await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE);
      return JSON.stringify(i?.status) === JSON.stringify({ clusters: [{ cluster: 'cluster-a' }] });
    });
    await w.a.delete(K.ServiceExport, 'echo', 'default');
    await waitFor('no import on the broker', async () => !(await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE)));
    // and it stays gone (no resync brings it back)
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE), undefined);

    // both clusters withdraw in the same moment: each folds the other's slice in, from its cache
    for (const s of [w.a, w.b]) await s.apply(exportOf('default', 'echo'));
    await waitFor('aggregate of both clusters again', async () => {
      const i = await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE);
      return (i?.status as { clusters?: unknown[] } | undefined)?.clusters?.length === 2;
    });
    await Promise.all([w.a.delete(K.ServiceExport, 'echo', 'default'), w.b.delete(K.ServiceExport, 'echo', 'default')]);
    await waitFor('no import on the broker after both withdrew', async () => !(await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE)));
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(await w.broker.get(K.ServiceImport, 'echo.default', BROKER_NAMESPACE), undefined);
    assert.equal((await w.broker.list(K.EndpointSlice, { namespace: BROKER_NAMESPACE })).items.length, 0);
  } finally {
    await w.stop();
  }
});

test("an export made before the cluster's own slices were listed is published not ready when its Service has no ready backend (never ready first)", async () => {
  // cluster-b's EndpointSlice list answers 600 ms late: its slice informer has not listed when the export is reconciled
  class SlowSliceList extends FlakyStore {
    override async list<T extends KubeObject = KubeObject>(kind: Parameters<ResourceStore['list']>[0], opts?: Parameters<ResourceStore['list']>[1]) {
      if ((kind as { kind?: string }).kind === 'EndpointSlice' && opts?.labelSelector === 'kubernetes.io/service-name')
        await new Promise((r) => setTimeout(r, 600));
      return super.list<T>(kind, opts);
    }
  }
  const broker = newTestStore();
  const b = new SlowSliceList(newTestStore());
  await b.apply(service('default', 'echo', '100.2.0.10'));
  await b.apply({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'echo-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'echo' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.2.1.7'], conditions: { ready: false } }],
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  });
  await b.apply(exportOf('default', 'echo'));
  // every version of cluster-b's slice on the broker, from the first
  const seen: unknown[] = [];
  const w = broker.watch(K.EndpointSlice, { namespace: BROKER_NAMESPACE }, (ev) =>
    seen.push((ev.object['endpoints'] as { conditions?: { ready?: boolean } }[])?.[0]?.conditions?.ready),
  );
  const agentB = new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker, resyncMs: 300 });
  agentB.start();
  try {
    await waitFor('the broker slice', async () => seen.length > 0);
    await new Promise((r) => setTimeout(r, 1000)); // past the slow list and a resync
    assert.deepEqual([...new Set(seen)], [false], `the broker slice's ready condition, every version: ${JSON.stringify(seen)}`);
  } finally {
    w.stop();
    await agentB.stop();
    await Promise.all([broker.close(), b.close()]);
  }
});
