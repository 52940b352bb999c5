// Objects made with kubectl bypass strait's write path, so the Kubernetes store checks
// what a list or a watch reads, as the attacker with kubectl access would feed it: objects
// the API server accepts (its CRD schema) but strait's rules refuse. An invalid object is
// skipped and reported with a Warning Event; a PeerAuthentication is read as STRICT for
// its scope (never weaker than what was written). Uses a real kube-apiserver.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kinds } from '../../src/platform/resources/index.js';
import { openKubernetesStore, type KubeObject, type KubernetesResourceStore, type WatchEvent } from '../../src/platform/store/index.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';
import { installCrds } from '../k8s/store-harness.js';

let cluster: TestCluster | undefined;
let skip: string | undefined;
let store: KubernetesResourceStore;

before(
  async () => {
    const r = await startTestCluster({});
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
    installCrds(cluster);
    store = openKubernetesStore({ kubeconfig: cluster.kubeconfig });
  },
  { timeout: 3_600_000 },
);
after(async () => {
  await store?.close();
  await cluster?.stop();
});

const kubectlApply = (yaml: string): void => {
  const r = cluster!.kubectl(['apply', '-f', '-'], yaml);
  assert.equal(r.status, 0, r.stderr);
};

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("kubectl-made objects that break strait's rules: a ServiceImport is skipped, a PeerAuthentication reads as STRICT; both get an Event", async (t) => {
  if (!cluster) return t.skip(skip);
  const seen: WatchEvent[] = [];
  const w = store.watch(Kinds.PeerAuthentication, {}, (ev) => {
    seen.push(ev);
  });
  try {
    // the CRD schema takes both; strait's rules do not (an IP list entry that is no IP;
    // portLevelMtls without a selector, with an intent to weaken a port)
    kubectlApply(
      'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: hostile, namespace: default}\nspec: {type: ClusterSetIP, ips: ["1.2.3.4 . tcp . 1 }"]}\n',
    );
    kubectlApply(
      'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: weaken, namespace: default}\nspec: {mtls: {mode: STRICT}, portLevelMtls: {"8080": {mode: DISABLE}}}\n',
    );
    const imports = await store.list(Kinds.ServiceImport, { namespace: 'default' });
    assert.deepEqual(
      imports.items.map((o) => o.metadata.name),
      [],
      'the invalid ServiceImport is not delivered',
    );
    const pas = await store.list<KubeObject & { spec: unknown }>(Kinds.PeerAuthentication, { namespace: 'default' });
    assert.equal(pas.items.length, 1);
    assert.deepEqual(pas.items[0]!.spec, { mtls: { mode: 'STRICT' } }, 'read as STRICT for its namespace, no port weakened');
    assert.match(pas.items[0]!.metadata.annotations?.['strait.dev/invalid'] ?? '', /portLevelMtls requires selector/);
    const watched = await eventually('the watch to deliver the PeerAuthentication', async () => seen.find((e) => e.object.metadata.name === 'weaken'));
    assert.deepEqual(watched.object.spec, { mtls: { mode: 'STRICT' } });
    const events = await eventually('two InvalidObject Events', async () => {
      const l = await store.list<KubeObject & { reason?: string; involvedObject?: { name: string } }>(Kinds.Event, { namespace: 'default' });
      const mine = l.items
        .filter((e) => e.reason === 'InvalidObject')
        .map((e) => e.involvedObject?.name)
        .sort();
      return mine.length >= 2 ? mine : undefined;
    });
    assert.deepEqual(events, ['hostile', 'weaken']);
  } finally {
    w.stop();
  }
});
