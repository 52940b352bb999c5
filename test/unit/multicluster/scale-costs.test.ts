// What one change costs, whatever the number of others (docs/limits.md): an export is
// propagated by a constant number of store calls, no list of every slice; what does not
// change writes nothing; a Gateway record that moves only in its counters leaves DNS alone.
import { zoneService } from '../../helpers/zone-service.js';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { silentLogger } from '../../../src/base/log/index.js';
import {
  BROKER_NAMESPACE,
  MC_KINDS as K,
  MulticlusterAgent,
  OPERATOR_NAMESPACE,
  startRecordsPublisher,
  type GatewayRecords,
} from '../../../src/multicluster/control/clusterset/index.js';
import { ClustersetZone, startClustersetDns, ZoneSource } from '../../../src/multicluster/control/clusterset-dns/index.js';
import { openEmbeddedStore, type KubeObject } from '../../../src/platform/store/index.js';
import { buildPlan, DEFAULT_WORLD, parseWorld, startClusterSync } from '../../../src/world/supervisor/index.js';
import { CountingStore, newTestStore } from '../../support/stores.js';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const service = (name: string, ip: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'scale' },
  spec: { type: 'ClusterIP', clusterIP: ip, ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
});
const exportOf = (name: string): KubeObject => ({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: 'scale' } });

/** cluster-b exports `existing` services; then one more, counted */
async function oneMoreExport(existing: number): Promise<{ a: CountingStore; b: CountingStore; broker: CountingStore }> {
  const broker = new CountingStore(newTestStore());
  const a = new CountingStore(newTestStore());
  const b = new CountingStore(newTestStore());
  const agentA = new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker });
  const agentB = new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker });
  agentA.start();
  agentB.start();
  try {
    for (let i = 0; i < existing; i++) {
      await b.apply(service(`svc-${i}`, `100.2.${i >> 8}.${(i & 255) + 1}`));
      await b.apply(exportOf(`svc-${i}`));
    }
    await waitFor('every export imported in cluster-a', async () => (await a.inner.list(K.ServiceImport, { namespace: 'scale' })).items.length === existing);
    await agentA.idle();
    await agentB.idle();
    for (const s of [a, b, broker]) s.reset();
    await b.apply(service('new', '100.2.200.1'));
    await b.apply(exportOf('new'));
    await waitFor('the new export imported with its status', async () => (await a.inner.get(K.ServiceImport, 'new', 'scale'))?.status !== undefined);
    await waitFor('the new export valid', async () =>
      ((await b.inner.get(K.ServiceExport, 'new', 'scale'))?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some(
        (c) => c.type === 'Valid' && c.status === 'True',
      ),
    );
    await agentA.idle();
    await agentB.idle();
    return { a, b, broker };
  } finally {
    await agentA.stop();
    await agentB.stop();
    await Promise.all([a.close(), b.close(), broker.close()]);
  }
}

test('one export costs a constant number of store calls, and no list, with 3 or 60 other exports', async () => {
  const few = await oneMoreExport(3);
  const many = await oneMoreExport(60);
  for (const [name, s] of Object.entries(many)) {
    assert.equal(s.calls.list, 0, `${name}: no list of every slice for one export (${JSON.stringify(s.calls)})`);
  }
  const total = (w: typeof few): number => Object.values(w).reduce((n, s) => n + s.calls.get + s.calls.write + s.calls.list, 0);
  assert.ok(total(many) <= total(few) + 2, `store calls for one export: ${total(few)} with 3 others, ${total(many)} with 60`);
  assert.ok(many.broker.calls.write <= 4, `broker writes for one export: ${many.broker.written.join(', ')}`);
  assert.ok(many.a.calls.write <= 4, `importing cluster's writes for one export: ${many.a.written.join(', ')}`);
});

test("the world's cluster sync does not re-list and re-program for an imported (MCS) slice, and does for a Service's own", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-sync-'));
  const store = openEmbeddedStore({ dir });
  const cluster = buildPlan(parseWorld(DEFAULT_WORLD)).clusters[0]!;
  let runs = 0;
  const sync = startClusterSync(cluster, store, silentLogger(), async () => {
    runs++;
  });
  try {
    await sync.settled();
    await sleep(100);
    const before = runs;
    const slice = (name: string, labels: Record<string, string>): KubeObject => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: 'scale', labels },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['100.2.0.11'] }],
      ports: [{ port: 80, protocol: 'TCP' }],
    });
    for (let i = 0; i < 5; i++) {
      await store.apply(
        slice(`imported-${i}`, { 'multicluster.kubernetes.io/service-name': `svc-${i}`, 'endpointslice.kubernetes.io/managed-by': 'strait-multicluster' }),
      );
    }
    await sleep(300); // ten debounce periods
    assert.equal(runs, before, 'no reconcile for slices imported from other clusters');
    await store.apply(slice('web-abcde', { 'kubernetes.io/service-name': 'web' }));
    await waitFor("a reconcile for a Service's own slice", () => runs > before, 3000);
  } finally {
    sync.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const records = (tx: number, status: string, rtt: string): GatewayRecords => ({
  endpoint: {
    clusterId: 'cluster-a',
    hostname: 'cluster-a-gw',
    endpointIP: '172.16.1.1',
    publicIP: '198.51.100.1',
    cableDriver: 'strait-psk',
    subnets: ['10.1.0.0/16'],
  },
  gateway: { node: 'cluster-a-gw', haStatus: 'active', summary: 'All connections (1) are established' },
  connections: [
    {
      gateway: 'cluster-a-gw',
      cluster: 'cluster-b',
      remoteIP: '198.51.100.2',
      nat: 'no',
      cableDriver: 'strait-psk',
      subnets: ['10.2.0.0/16'],
      status,
      rttAvg: rtt,
      txBytes: tx,
      rxBytes: tx,
    },
  ],
});

test('the records publisher writes nothing while only counters and RTT move; a status change and a new remote Endpoint are written', async () => {
  const local = new CountingStore(newTestStore());
  const broker = new CountingStore(newTestStore());
  let polls = 0;
  let status = 'connected';
  const pub = startRecordsPublisher({ local, broker, intervalMs: 10, fetchRecords: async () => records(++polls * 100, status, `${polls % 7}00µs`) });
  try {
    await waitFor('first publish', async () => (await local.inner.list(K.Gateway, {})).items.length === 1);
    // and the first rate, written once a second of counters is known (a change of the records)
    await waitFor(
      'first rate published',
      async () =>
        ((await local.inner.list(K.Gateway, {})).items[0]?.status as { connections?: { txBps?: number }[] } | undefined)?.connections?.[0]?.txBps !== undefined,
      3000,
    );
    await sleep(100);
    local.reset();
    broker.reset();
    const from = polls;
    await sleep(300);
    assert.ok(polls - from >= 10, `polled ${polls - from} times`);
    assert.deepEqual(
      { local: local.calls, broker: broker.calls },
      { local: { list: 0, get: 0, write: 0 }, broker: { list: 0, get: 0, write: 0 } },
      'polls that differ only in counters and RTT touch no store',
    );
    status = 'error';
    await waitFor(
      'the status change published',
      async () => {
        const gw = (await local.inner.list(K.Gateway, {})).items[0];
        return (gw?.status as { connections?: { status: string }[] } | undefined)?.connections?.[0]?.status === 'error';
      },
      3000,
    );
    // another cluster's Endpoint appears on the broker: copied in, without a change of these records
    await broker.inner.apply({
      apiVersion: K.Endpoint.apiVersion,
      kind: 'Endpoint',
      metadata: { name: 'cluster-b-cluster-b-gw', namespace: BROKER_NAMESPACE },
      spec: {
        cluster_id: 'cluster-b',
        clusterId: 'cluster-b',
        hostname: 'cluster-b-gw',
        endpointIP: '172.16.2.1',
        publicIP: '198.51.100.2',
        cableDriver: 'strait-psk',
        subnets: ['10.2.0.0/16'],
      },
    });
    await waitFor(
      'the remote Endpoint copied in',
      async () => (await local.inner.get(K.Endpoint, 'cluster-b-cluster-b-gw', OPERATOR_NAMESPACE)) !== undefined,
      3000,
    );
  } finally {
    await pub.stop();
    await Promise.all([local.close(), broker.close()]);
  }
});

test('a Gateway record that changes only its RTT leaves the clusterset zone (and its answer cache) alone', async () => {
  const store = newTestStore();
  const zone = new ClustersetZone('cluster-a');
  const source = new ZoneSource(store, zone);
  const gateway = (status: string, rtt: string): KubeObject => ({
    apiVersion: K.Gateway.apiVersion,
    kind: 'Gateway',
    metadata: { name: 'cluster-a-gw', namespace: OPERATOR_NAMESPACE },
    status: {
      node: 'cluster-a-gw',
      haStatus: 'active',
      summary: 'x',
      connections: [{ gateway: 'cluster-a-gw', cluster: 'cluster-b', remoteIP: '198.51.100.2', status, rttAvg: rtt }],
    },
  });
  try {
    source.start();
    const gw = await store.apply(gateway('connected', '100µs'));
    await store.updateStatus({ ...gw, status: gateway('connected', '100µs').status });
    await waitFor('health from the record', async () => {
      await sleep(50);
      return zone.generation > 0;
    });
    await sleep(100);
    const g0 = zone.generation;
    for (const rtt of ['200µs', '300µs', '400µs'])
      await store.updateStatus({ ...gw, metadata: { ...gw.metadata, resourceVersion: undefined }, status: gateway('connected', rtt).status });
    await sleep(200);
    assert.equal(zone.generation, g0, 'RTT-only changes do not move the zone');
    await store.updateStatus({ ...gw, metadata: { ...gw.metadata, resourceVersion: undefined }, status: gateway('connecting', '400µs').status });
    await waitFor('a connection going down moves the zone', () => zone.generation > g0, 3000);
  } finally {
    source.stop();
    await store.close();
  }
});

test("an export leaves every other name's DNS answer cached; a change of that name is answered at once", async () => {
  const zone = new ClustersetZone('cluster-a');
  const svc = (name: string, ip: string) =>
    zoneService(name, { 'cluster-b': [{ ip }] }, { namespace: 'scale', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] });
  for (let i = 0; i < 50; i++) zone.upsert(svc(`svc-${i}`, `100.2.0.${i + 1}`));
  let resolves = 0;
  const resolve = zone.resolve.bind(zone);
  zone.resolve = (q, t) => {
    resolves++;
    return resolve(q, t);
  };
  const dns = await startClustersetDns({ zone, address: '127.0.0.1', port: 0 });
  const dig = async (name: string): Promise<string> =>
    (
      await promisify(execFile)('dig', [`@127.0.0.1`, '-p', String(dns.port), '+time=2', '+tries=1', '+short', `${name}.scale.svc.clusterset.local`])
    ).stdout.trim();
  try {
    assert.equal(await dig('svc-1'), '100.2.0.2');
    assert.equal(await dig('svc-1'), '100.2.0.2');
    assert.equal(resolves, 1, 'the second answer came from the cache');
    zone.upsert(svc('new', '100.2.1.1')); // another cluster's export
    zone.remove('scale', 'svc-7');
    assert.equal(await dig('svc-1'), '100.2.0.2');
    assert.equal(resolves, 1, 'other exports left the cached answer in place');
    zone.upsert(svc('svc-1', '100.2.9.9'));
    assert.equal(await dig('svc-1'), '100.2.9.9', 'a change of the name itself is answered at once');
    assert.equal(await dig('svc-7'), '', 'a removed name no longer answers');
    assert.equal(await dig('later'), '');
    zone.upsert(svc('later', '100.2.8.8'));
    assert.equal(await dig('later'), '100.2.8.8', 'a name that did not exist answers once exported');
  } finally {
    await dns.close();
  }
});
