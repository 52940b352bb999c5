// The node-level mesh proxy: one process per node serves every injected pod of the node
// (docs/mesh-node.md). Started by the mesh agent with an IPC channel; runs as root in the
// world's root namespace and owns listeners inside each pod's network namespace.
//   node dist/agents/mesh-node/main.js [--node NAME] [--inbound-port 15006] [--outbound-port 15001]
//     [--mark 1337] [--metrics-port 15020 | 0]
// IPC from the agent:
// Assembled in src/mesh/control/proxy-run/node-proxy.ts.
import { printedInfo, runEntry } from '../../daemon/entry.js';
import { runNodeProxy, NODE_PROXY_HELP } from '../../src/mesh/control/proxy-run/index.js';

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-mesh-node', NODE_PROXY_HELP)) return;
  await runNodeProxy();
}

runEntry(main);
