// The ResourceStore conformance suite (test/conformance/store-suite.ts), the same one the
// embedded store passes, against a real kube-apiserver + etcd (test/k8s/cluster.ts).
import { after, test } from 'node:test';
import { openKubernetesStore } from '../../src/platform/store/index.js';
import { runStoreConformance } from '../conformance/store-suite.js';
import { startTestCluster } from '../k8s/cluster.js';
import { deleteEverything, hideSystemObjects, installCrds } from '../k8s/store-harness.js';

// top-level await: the suite's cases are registered only when there is a server to run them on
const started = await startTestCluster({
  // the suite writes into namespaces it never creates, as the embedded store allows
  disableAdmissionPlugins: ['NamespaceLifecycle'],
});

if ('skip' in started) {
  test('ResourceStore conformance: kubernetes (real kube-apiserver)', (t) => {
    t.skip(started.skip);
  });
} else {
  const cluster = started;
  installCrds(cluster);
  after(() => cluster.stop());
  runStoreConformance('kubernetes (real kube-apiserver)', async () => {
    const store = openKubernetesStore({ kubeconfig: cluster.kubeconfig });
    return {
      store: hideSystemObjects(store),
      async cleanup() {
        await store.close();
        await deleteEverything(cluster);
      },
    };
  });
}
