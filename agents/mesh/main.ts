// The mesh agent of one cluster of the local world (runs in the world's root namespace):
// certificates, root ConfigMap, the sidecar of every injected pod (started in the pod's
// namespace, configuration pushed over IPC) and the ingress gateway's configuration file.
//   node dist/agents/mesh/main.js
// Environment (the world sets the STRAIT_STORE_* and STRAIT_STATE_DIR for every component):
//   STRAIT_CLUSTER            cluster name (required)
// Assembled in src/mesh/control/run/agent.ts.
import { printedInfo, runEntry } from '../../daemon/entry.js';
import { runMeshAgent, MESH_AGENT_HELP } from '../../src/mesh/control/run/index.js';

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-mesh-agent', MESH_AGENT_HELP)) return;
  await runMeshAgent();
}

runEntry(main);
