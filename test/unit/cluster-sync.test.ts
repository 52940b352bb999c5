// The world's control loop (docs/world.md) over a cluster's store (real embedded store):
// ClusterIPs for new Services, EndpointSlices from Running pods, and the data plane
// re-programmed with each change.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../src/base/log/index.js';
import { openEmbeddedStore } from '../../src/platform/store/index.js';
import { allocateClusterIP, buildPlan, DEFAULT_WORLD, parseWorld, startClusterSync, type ServiceViews } from '../../src/world/supervisor/index.js';

const Pod = { apiVersion: 'v1', kind: 'Pod' };
const Service = { apiVersion: 'v1', kind: 'Service' };
const Slice = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' };

test('allocateClusterIP skips .1-.10 and addresses in use', () => {
  assert.equal(allocateClusterIP('100.1.0.0/16', new Set()), '100.1.0.11');
  assert.equal(allocateClusterIP('100.1.0.0/16', new Set(['100.1.0.11', '100.1.0.12'])), '100.1.0.13');
  assert.equal(allocateClusterIP('100.1.0.0/28', new Set(['100.1.0.11', '100.1.0.12', '100.1.0.13', '100.1.0.14'])), undefined);
});

test('cluster sync: a Service gets a ClusterIP and an EndpointSlice of its Running pods; the data plane follows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strait-sync-'));
  const store = openEmbeddedStore({ dir });
  const cluster = buildPlan(parseWorld(DEFAULT_WORLD)).clusters[0];
  assert.ok(cluster);
  const programmed: ServiceViews[] = [];
  const sync = startClusterSync(cluster, store, silentLogger(), async (v) => {
    programmed.push(v);
  });
  try {
    for (const [name, ip, phase] of [
      ['a', '10.1.0.5', 'Running'],
      ['b', '10.1.1.5', 'Running'],
      ['c', '10.1.1.6', 'Pending'],
    ] as const) {
      const pod = await store.apply({
        ...Pod,
        metadata: { name, namespace: 'shop', labels: { app: 'web' } },
        spec: { containers: [{ name: 'x', image: 'strait/echo' }] },
      });
      await store.updateStatus({ ...pod, status: { phase, podIP: ip } });
    }
    await store.apply({
      ...Service,
      metadata: { name: 'web', namespace: 'shop' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    await sync.settled();
    await sync.settled();
    const svc = await store.get(Service, 'web', 'shop');
    assert.equal((svc?.spec as { clusterIP: string }).clusterIP, '100.1.0.11');
    const slice = await store.get(Slice, 'web-world', 'shop');
    assert.deepEqual(
      (slice?.['endpoints'] as { addresses: string[] }[]).map((e) => e.addresses[0]),
      ['10.1.0.5', '10.1.1.5'],
      'Running pods only',
    );
    assert.deepEqual(slice?.['ports'], [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const last = programmed.at(-1);
    assert.deepEqual(
      last?.proxy.find((p) => p.name === 'web'),
      {
        namespace: 'shop',
        name: 'web',
        clusterIP: '100.1.0.11',
        ports: [
          {
            protocol: 'TCP',
            port: 80,
            endpoints: [
              { ip: '10.1.0.5', port: 8080 },
              { ip: '10.1.1.5', port: 8080 },
            ],
          },
        ],
      },
    );
    assert.deepEqual(last?.dns.find((d) => d.name === 'web')?.clusterIP, '100.1.0.11');
    // the Service goes: its slice goes, and the data plane forgets it
    await store.delete(Service, 'web', 'shop');
    await sync.settled();
    await sync.settled();
    assert.equal(await store.get(Slice, 'web-world', 'shop'), undefined);
    assert.equal(
      programmed.at(-1)?.proxy.find((p) => p.name === 'web'),
      undefined,
    );
  } finally {
    sync.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
