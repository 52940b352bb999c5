// The local world's supervisor process, assembled: the processes it runs besides its
// workloads (components.ts: gateways, node agents, multicluster daemons, the control module,
// githost, the mesh), the process itself (process.ts) and its record, world.json (record.ts).
export { runWorldProcess } from './process.js';
export { worldComponents, entry } from './components.js';
export { readWorldRecord, removeWorldRecord, writeWorldRecord, type WorldRecord } from './record.js';
export { INGRESS_PORT, INGRESS_METRICS_PORT } from './mesh.js';
