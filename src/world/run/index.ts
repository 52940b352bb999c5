// The local world's supervisor process, assembled: the processes it runs besides its
// workloads (components.ts: gateways, node agents, multicluster daemons, the control module,
// githost, the mesh), the process itself (process.ts) and its record, world.json (record.ts).
// Only the record and the ingress ports load with this index: the supervisor's own graph
// (components.ts, process.ts) is the supervisor process's, loaded by runWorldProcess.

/**
 * The supervisor process's main (daemon/world.ts), loaded when called: the CLI imports this
 * component for the world's record and its ports, and `strait up` (the owner) never loads the
 * supervisor's own graph (its stores, DNS server, metrics, controllers).
 */
export async function runWorldProcess(stateDir: string): Promise<void> {
  return (await import('./process.js')).runWorldProcess(stateDir);
}
export { readWorldRecord, removeWorldRecord, writeWorldRecord, type WorldRecord } from './record.js';
export { INGRESS_PORT, INGRESS_METRICS_PORT } from './mesh.js';
