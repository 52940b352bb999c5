// The local world (docs/world.md, Resources in the store): the world registers what it built in each cluster's store, and
// what is applied to a store while the world runs becomes real (pods, ClusterIPs,
// EndpointSlices, nftables, DNS).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { strait, upWorld, type TestWorld } from '../helpers/world.js';

// the store client arrives with the store work; until then these tests are skipped
type StoreClient = {
  apply(o: unknown): Promise<unknown>;
  delete(k: { apiVersion: string; kind: string }, name: string, ns?: string): Promise<boolean>;
  get(k: { apiVersion: string; kind: string }, name: string, ns?: string): Promise<{ status?: Record<string, unknown> } | undefined>;
  close(): Promise<void>;
};
const storeModule = (await import('../../src/platform/store/index.js')) as Record<string, unknown>;
const connect = storeModule['connectStoreFromFiles'] as ((o: { socketPath: string; tokenFile: string; cluster: string }) => StoreClient) | undefined;
const skip = typeof connect !== 'function' ? 'the store API is not built yet' : false;
// `strait get` arrives with the store's CLI work
const skipGet = skip || (strait(['get', '--help']).status !== 0 ? 'the get command is not built yet' : false);

let world: TestWorld;
before(() => {
  if (!skip) world = upWorld();
});
after(() => world?.cleanup());

const client = (cluster: string): StoreClient => {
  const rec = world.record() as unknown as { store: { socket: string; token: string; available: boolean; reason?: string } };
  assert.ok(rec.store.available, `store unavailable: ${rec.store.reason}`);
  return (connect as NonNullable<typeof connect>)({ socketPath: rec.store.socket, tokenFile: rec.store.token, cluster });
};

async function eventually<T>(what: string, fn: () => T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("strait get pods -A --cluster cluster-b -o json lists the world's pods with their IPs", { skip: skipGet }, () => {
  const r = strait(['get', 'pods', '-A', '--cluster', 'cluster-b', '-o', 'json', '--state-dir', world.stateDir]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { items: { metadata: { name: string; namespace: string }; status: { podIP: string; phase: string } }[] };
  const pods = new Map(out.items.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p.status]));
  assert.deepEqual(pods.get('default/client'), { ...pods.get('default/client'), podIP: '10.2.1.2', phase: 'Running' });
  const echo = out.items.find((p) => p.metadata.name.startsWith('echo-'));
  assert.equal(echo?.status.podIP, '10.2.0.2');
  const svc = strait(['get', 'services', '-n', 'default', '--cluster', 'cluster-b', '-o', 'json', '--state-dir', world.stateDir]);
  assert.equal(svc.status, 0, svc.stderr);
  assert.ok((JSON.parse(svc.stdout) as { items: { spec: { clusterIP: string } }[] }).items.some((s) => s.spec.clusterIP === '100.2.0.11'));
});

test('a Deployment and Service applied to the store become reachable pods behind a ClusterIP and a DNS name', { skip }, async () => {
  const store = client('cluster-a');
  try {
    await store.apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'strait/echo', ports: [{ containerPort: 8080 }] }] } },
      },
    });
    await store.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    });
    const seen = new Set<string>();
    await eventually(
      'both replicas answering through web.shop',
      () => {
        const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '2', 'http://web.shop/']);
        if (r.status !== 0) return undefined;
        const body = JSON.parse(r.stdout) as { pod: string; namespace: string; remoteAddress: string };
        assert.equal(body.namespace, 'shop');
        assert.equal(body.remoteAddress, '10.1.1.2');
        seen.add(body.pod);
        return seen.size === 2 ? true : undefined;
      },
      30_000,
    );
    const bad = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bad', namespace: 'shop' }, spec: { containers: [{ name: 'x', image: 'nginx' }] } };
    await store.apply(bad);
    let phase: unknown;
    for (let i = 0; i < 75 && phase === undefined; i++) {
      const p = await store.get({ apiVersion: 'v1', kind: 'Pod' }, 'bad', 'shop');
      if (p?.status?.['phase'] === 'Failed') phase = p.status['reason'];
      else await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(phase, 'ErrImagePull');
    // deleting the Service removes its ClusterIP from every node's proxy and its name from DNS
    await store.delete({ apiVersion: 'v1', kind: 'Service' }, 'web', 'shop');
    await eventually('web.shop to be gone from DNS', () => {
      const r = world.exec('cluster-a/default/client', ['dig', 'web.shop.svc.cluster.local']);
      return /status: NXDOMAIN/.test(r.stdout) ? true : undefined;
    });
  } finally {
    await store.close();
  }
});
