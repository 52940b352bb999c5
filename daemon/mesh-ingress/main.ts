// The ingress gateway process: external plaintext HTTP in, mTLS (or plaintext, per the
// DestinationRules) into the mesh. Its configuration file is written by the mesh agent
// (<mesh dir>/ingress.json) and re-read when it changes.
//   node dist/daemon/mesh-ingress/main.js --config FILE [--listen 0.0.0.0:15080] [--listen-unix PATH] [--metrics HOST:PORT]
//   node dist/daemon/mesh-ingress/main.js --control URL [...]   (Kubernetes mode: deploy/mesh-ingress.yaml)
// Prints {"ready":true,...} on stdout, and sends {type:'ready'} over IPC when it has a channel.
// Assembled in src/mesh/control/proxy-run/ingress.ts.
import { printedInfo, runEntry } from '../entry.js';
import { runMeshIngress, MESH_INGRESS_HELP } from '../../src/mesh/control/proxy-run/index.js';

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-mesh-ingress', MESH_INGRESS_HELP)) return;
  await runMeshIngress();
}

runEntry(main);
