// The control module in Kubernetes mode (STRAIT_STORE=kubernetes, deploy/control.yaml):
// besides GitOps sync (started by run.ts on the same store), the mesh of
// src/mesh/control/run (controller, configuration service, sidecar-injection webhook) and the
// multicluster control of src/multicluster/control/run (the export/import sync with the
// broker once this cluster has joined, following the join as the local world does, and the
// clusterset.local DNS server on 5353 behind the Service strait-dns: the cluster's CoreDNS
// forwards clusterset.local to it, as to Lighthouse's).
import type { Registry } from 'prom-client';
import type { ClustersetDns } from '../multicluster/control/clusterset-dns/index.js';
import { runMulticluster, type ClustersetDnsSettings } from '../multicluster/control/run/index.js';
import { runMeshKubernetes, type MeshKubernetes, type MeshKubernetesOptions } from '../mesh/control/run/index.js';

export interface KubernetesControlOptions extends MeshKubernetesOptions {
  registry: Registry;
  /** the clusterset.local DNS server (UDP and TCP), started once the cluster has joined; absent: none */
  dns?: ClustersetDnsSettings;
  /** a clusterset IP per ClusterSetIP import (STRAIT_CLUSTERSET_IP; default true) */
  clustersetIP?: boolean;
}

export interface KubernetesControl extends Omit<MeshKubernetes, 'close'> {
  /** the clusterset.local DNS server, once the cluster has joined */
  readonly dns: ClustersetDns | undefined;
  close(): Promise<void>;
}

export async function startKubernetesControl(o: KubernetesControlOptions): Promise<KubernetesControl> {
  const retryMs = o.retryMs ?? 2000;
  const mesh = await runMeshKubernetes(o, o.registry);
  // polled: the join's Role gives this process get only
  const multicluster = runMulticluster({
    local: o.store,
    registry: o.registry,
    log: o.log.child({ part: 'multicluster' }),
    resyncMs: 10_000,
    ...(o.clustersetIP !== undefined ? { clustersetIP: o.clustersetIP } : {}),
    join: { watch: false, pollMs: retryMs, backoff: { initialMs: retryMs, maxMs: retryMs } },
    ...(o.dns ? { dns: o.dns } : {}),
  });
  return {
    webhook: mesh.webhook,
    mesh: mesh.mesh,
    meshConfig: mesh.meshConfig,
    get dns() {
      return multicluster.dns;
    },
    pending: () => mesh.pending(),
    async close() {
      await multicluster.stop();
      await mesh.close();
    },
  };
}
