// The mesh agent of one cluster of the local world (runs in the world's root namespace):
// certificates, root ConfigMap, the sidecar of every injected pod (started in the pod's
// namespace, configuration pushed over IPC) and the ingress gateway's configuration file.
//   node dist/agents/mesh/main.js
// Environment (the world sets the STRAIT_STORE_* and STRAIT_STATE_DIR for every component):
//   STRAIT_CLUSTER            cluster name (required)
//   STRAIT_STATE_DIR          mesh files go to <state>/mesh/<cluster>/, the root CA to <state>/mesh/ca.json
//   STRAIT_STORE_SOCKET, STRAIT_STORE_TOKEN_FILE   the world's store API
//   STRAIT_MESH_BOOTSTRAP     comma-separated member namespaces: apply the default SMCP (flags false) and member roll when absent
//   STRAIT_MESH_METRICS       HOST:PORT for the agent's own /metrics
//   STRAIT_METRICS_PORT       the world's metrics port, excluded from the pods' inbound redirect
//   STRAIT_MESH_INGRESS       JSON list of routes [{pathPrefix, namespace, service, port}] for <dir>/ingress.json
//   STRAIT_MESH_DATAPLANE     sidecar (a proxy process per injected pod, default) or node (one per node, docs/mesh-node.md)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { E } from '../../../base/errors/index.js';
import { Lifecycle } from '../../../base/lifecycle/index.js';
import { createLogger } from '../../../base/log/index.js';
import { defaultMeshObjects, loadOrCreateCa, MESH_DATAPLANES, startMeshAgent, type IngressRouteSpec, type MeshAgent, type MeshDataplane } from '../index.js';
import { Counter, Gauge, Registry } from 'prom-client';
import { serveMetrics } from '../../../platform/metrics/index.js';
import { connectStoreFromFiles } from '../../../platform/store/index.js';

const env = (k: string): string | undefined => process.env[k];

export const MESH_AGENT_HELP = `usage: strait-mesh-agent (configured by its environment; started by 'strait up')

The mesh agent of one cluster of the local world: certificates, the root ConfigMap, the
sidecar of every injected pod and the ingress gateway's configuration (docs/mesh.md).

Environment:
  STRAIT_CLUSTER            cluster name (required)
  STRAIT_STATE_DIR          mesh files go to <state>/mesh/<cluster>/ (required)
  STRAIT_STORE_SOCKET, STRAIT_STORE_TOKEN_FILE   the world's store API (required)
  STRAIT_MESH_BOOTSTRAP     comma-separated member namespaces
  STRAIT_MESH_METRICS       HOST:PORT for the agent's own /metrics
  STRAIT_METRICS_PORT       the world's metrics port, excluded from the pods' inbound redirect
  STRAIT_MESH_INGRESS       JSON list of ingress routes
  STRAIT_MESH_DATAPLANE     sidecar (a proxy process per injected pod, default) or
                            node (one proxy per node for all its pods)

  -h, --help                this help
  -V, --version             the version
`;

/** The agent's own metrics: reconcile passes, sidecars by state, sidecar restarts (read at scrape time). */
function meshAgentRegistry(agent: MeshAgent): Registry {
  const reg = new Registry();
  new Counter({
    name: 'strait_mesh_agent_reconciles_total',
    help: 'reconcile passes of the mesh controller',
    registers: [reg],
    collect(this: Counter<string>) {
      this.reset();
      this.inc(agent.controller.reconciles);
    },
  });
  new Gauge({
    name: 'strait_mesh_agent_sidecars',
    help: 'sidecars the agent supervises, by state',
    labelNames: ['state'],
    registers: [reg],
    collect(this: Gauge<string>) {
      const st = agent.supervisor.status();
      this.set({ state: 'running' }, st.filter((x) => x.running).length);
      this.set({ state: 'ready' }, st.filter((x) => x.ready).length);
    },
  });
  new Counter({
    name: 'strait_mesh_agent_sidecar_restarts_total',
    help: 'sidecar restarts',
    registers: [reg],
    collect(this: Counter<string>) {
      this.reset();
      this.inc(agent.supervisor.status().reduce((n, x) => n + x.restarts, 0));
    },
  });
  return reg;
}

export async function runMeshAgent(): Promise<void> {
  const cluster = env('STRAIT_CLUSTER');
  const stateDir = env('STRAIT_STATE_DIR');
  const socketPath = env('STRAIT_STORE_SOCKET');
  const tokenFile = env('STRAIT_STORE_TOKEN_FILE');
  if (!cluster || !stateDir || !socketPath || !tokenFile)
    throw E.usage('STRAIT_CLUSTER, STRAIT_STATE_DIR, STRAIT_STORE_SOCKET and STRAIT_STORE_TOKEN_FILE are required in the environment (add --help for usage)');
  const log = createLogger('mesh-agent', { cluster });
  const life = new Lifecycle();
  const meshDir = join(stateDir, 'mesh');
  const dir = join(meshDir, cluster);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const ca = await loadOrCreateCa(join(meshDir, 'ca.json'));
  const store = connectStoreFromFiles({ socketPath, tokenFile, cluster });
  const members = env('STRAIT_MESH_BOOTSTRAP');
  const routes = env('STRAIT_MESH_INGRESS');
  const dataplane = (env('STRAIT_MESH_DATAPLANE') ?? 'sidecar') as MeshDataplane;
  if (!MESH_DATAPLANES.includes(dataplane)) throw E.configInvalid('STRAIT_MESH_DATAPLANE', dataplane, `must be one of ${MESH_DATAPLANES.join(', ')}`);
  // sidecars drop to uid 1337 so that the pod's redirect spares their own connections; a
  // world in a user namespace maps only root, so there the mesh runs without sidecars (the
  // node proxy stays root and is spared by the mark on its sockets: it runs there too)
  const proxies = env('STRAIT_USERNS') !== '1' || dataplane === 'node';
  if (!proxies) log.warn('user-namespace world: uid 1337 is not mapped, injected pods run without sidecars (the node dataplane works there)');
  // the proxies' entries beside the agent's (dist/agents/mesh/)
  const here = fileURLToPath(new URL('../../../../agents/mesh/', import.meta.url));
  const agent = await startMeshAgent({
    sidecars: proxies,
    dataplane,
    nodeProxyScript: join(here, '..', 'mesh-node', 'main.js'),
    store,
    ca,
    dir,
    log,
    // the world scrapes every pod's metrics port in plaintext: it bypasses the sidecar
    ...(env('STRAIT_METRICS_PORT') ? { excludeInboundPorts: [Number(env('STRAIT_METRICS_PORT'))] } : {}),
    sidecarScript: join(here, '..', 'sidecar', 'main.js'),
    ...(members ? { bootstrap: defaultMeshObjects(members.split(',').filter(Boolean)) } : {}),
    ...(routes
      ? { ingress: { namespace: 'istio-system', serviceAccount: 'istio-ingressgateway-service-account', routes: JSON.parse(routes) as IngressRouteSpec[] } }
      : {}),
  });
  life.onShutdown('agent', () => agent.stop());
  const metricsAt = env('STRAIT_MESH_METRICS');
  if (metricsAt) {
    const reg = meshAgentRegistry(agent);
    const m = /^(.+):(\d+)$/.exec(metricsAt);
    if (!m) throw E.configInvalid('STRAIT_MESH_METRICS', metricsAt, 'must be HOST:PORT');
    const srv = await serveMetrics(reg, { port: Number(m[2]), host: (m[1] as string).replace(/^\[|\]$/g, '') });
    life.onShutdown('metrics', () => srv.close());
  }
  life.onShutdown('store', () => store.close());
  life.handleSignals(log);
  process.send?.({ type: 'ready' });
  log.info({ dir }, 'mesh agent ready');
}
