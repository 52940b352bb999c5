// The gateway daemon, assembled: the data plane of src/multicluster/dataplane/gateway with
// /metrics and /records (run.ts), HA through ../gateway-ha and the Node objects (nodes.ts)
// loaded only when configured, and the process around it (process.ts).
export { runGatewayDaemon, gatewayRecords, type GatewayDaemon, type GatewayDaemonOptions } from './run.js';
export { startGatewayProcess, type GatewayProcess } from './process.js';
export { gatewayRegistry } from './metrics.js';
