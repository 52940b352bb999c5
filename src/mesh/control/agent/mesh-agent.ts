// The mesh agent of one cluster in the local world: the MeshController (certificates,
// root ConfigMap, sidecar configurations) and a proxy supervisor, joined: each
// configuration the controller computes is written to its file and pushed to the pod's
// running proxy over IPC. The proxies are, by `dataplane`, a sidecar process in every
// injected pod's namespace (SidecarSupervisor), or one node-level proxy per node serving
// all of its injected pods (NodeProxySupervisor, docs/mesh-node.md).
import type { Logger } from 'pino';
import { E } from '../../../base/errors/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import type { MeshCa } from '../ca/index.js';
import { MeshController, type MeshControllerOptions, type ReconcileResult } from '../controller/index.js';
import { NodeProxySupervisor } from './node-proxy-supervisor.js';
import { SidecarSupervisor, type ProxySupervisor } from './sidecar-supervisor.js';
import { publishSidecarStatus } from './pod-status.js';
import { ObservationWriter } from '../observe/index.js';

export interface MeshAgentOptions {
  store: ResourceStore;
  ca: MeshCa;
  dir: string;
  sidecarScript: string;
  /** how the pods' proxies run: a process per pod (default) or one per node */
  dataplane?: MeshDataplane;
  /** compiled agents/mesh-node/main.js (dataplane 'node') */
  nodeProxyScript?: string;
  nodeBinary?: string;
  proxyUid?: number;
  /** inbound ports that bypass the sidecars */
  excludeInboundPorts?: number[];
  /** objects applied when absent (the default world's SMCP and member roll) */
  bootstrap?: KubeObject[];
  log?: Logger;
  onReconciled?: (r: ReconcileResult) => void;
  /** start sidecar processes (default true); false: only certificates and configurations */
  sidecars?: boolean;
  /** lifetime of workload certificates (default 24 h; re-issued at half of it) */
  workloadLifetimeMs?: number;
  /** write <dir>/ingress.json for the ingress gateway */
  ingress?: MeshControllerOptions['ingress'];
  /** inbound flows kept per pod in its MeshTrafficObservation (default 256) */
  flowLimit?: number;
}

export type MeshDataplane = 'sidecar' | 'node';
export const MESH_DATAPLANES: readonly MeshDataplane[] = ['sidecar', 'node'];

export interface MeshAgent {
  controller: MeshController;
  supervisor: ProxySupervisor;
  /** the MeshTrafficObservations (undefined without sidecars) */
  observations: ObservationWriter | undefined;
  stop(): Promise<void>;
}

/** The proxies of the node's injected pods: one sidecar per pod, or one node proxy for them all (dataplane 'node'). */
function newProxySupervisor(o: MeshAgentOptions, publish: () => void, observations: ObservationWriter | undefined): ProxySupervisor {
  const common = {
    onChange: publish,
    dir: o.dir,
    ...(observations
      ? {
          // both supervisors' reports (over IPC, in the proxies' message handlers): one the agent does
          // not read (a newer proxy's format, STRAIT_ERR_VERSION_UNSUPPORTED) is said and dropped, never thrown there
          onFlows: (pod: string, report: unknown) => {
            try {
              observations.report(pod, report);
            } catch (err) {
              o.log?.warn({ pod, err: String(err) }, 'flow report refused');
            }
          },
        }
      : {}),
    ...(o.flowLimit !== undefined ? { flowLimit: o.flowLimit } : {}),
    ...(o.nodeBinary ? { nodeBinary: o.nodeBinary } : {}),
    ...(o.excludeInboundPorts ? { excludeInboundPorts: o.excludeInboundPorts } : {}),
    ...(o.log ? { log: o.log } : {}),
  };
  if (o.dataplane === 'node') {
    if (!o.nodeProxyScript) throw E.usage("the mesh agent needs nodeProxyScript (agents/mesh-node/main.js) for dataplane 'node'");
    return new NodeProxySupervisor({ ...common, nodeProxyScript: o.nodeProxyScript });
  }
  return new SidecarSupervisor({ ...common, sidecarScript: o.sidecarScript, ...(o.proxyUid !== undefined ? { proxyUid: o.proxyUid } : {}) });
}

export async function startMeshAgent(o: MeshAgentOptions): Promise<MeshAgent> {
  for (const obj of o.bootstrap ?? []) {
    const have = await o.store.get({ apiVersion: obj.apiVersion, kind: obj.kind }, obj.metadata.name, obj.metadata.namespace);
    if (!have) await o.store.apply(obj, { fieldManager: 'strait-mesh' });
  }
  // the sidecars in their pods' status (READY 2/2): one write pass at a time, again if asked meanwhile
  const touched = new Set<string>();
  let publishing: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const publish = (): void => {
    if (stopped || o.sidecars === false) return;
    if (publishing) {
      again = true;
      return;
    }
    const sidecars = supervisor.status();
    for (const s of sidecars) touched.add(s.pod.split('/')[0] as string);
    publishing = publishSidecarStatus(o.store, sidecars, [...touched])
      .catch((err: unknown) => o.log?.warn({ err: String(err) }, "cannot write the sidecars into their pods' status; retried at the next change"))
      .finally(() => {
        publishing = undefined;
        if (again) {
          again = false;
          publish();
        }
      });
  };
  // what the proxies saw, into one MeshTrafficObservation per pod (read back first: flows survive a restart of the agent)
  const observations =
    o.sidecars === false
      ? undefined
      : new ObservationWriter({ store: o.store, ...(o.log ? { log: o.log } : {}), ...(o.flowLimit !== undefined ? { flowLimit: o.flowLimit } : {}) });
  await observations?.start();
  const supervisor = newProxySupervisor(o, publish, observations);
  const controller = new MeshController({
    store: o.store,
    ca: o.ca,
    dir: o.dir,
    ...(o.log ? { log: o.log } : {}),
    ...(o.ingress ? { ingress: o.ingress } : {}),
    ...(o.workloadLifetimeMs ? { workloadLifetimeMs: o.workloadLifetimeMs } : {}),
    ...(o.proxyUid !== undefined ? { proxyUid: o.proxyUid } : {}),
    onReconciled: (r) => {
      if (o.sidecars !== false) {
        supervisor.sync(r.view);
        for (const c of r.changed) supervisor.push(c.namespace, c.pod, c.config);
        publish();
        observations?.update(r.view);
      }
      o.onReconciled?.(r);
    },
  });
  await controller.start();
  return {
    controller,
    supervisor,
    observations,
    stop: async () => {
      stopped = true;
      controller.stop();
      await supervisor.stop();
      observations?.stop();
      await publishing;
    },
  };
}
