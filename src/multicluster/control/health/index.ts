// Health of the cluster set's links as the data path measures it (the tunnel endpoint's
// probes, dataplane/tunnel/health.ts), published as metrics beside the gateway's others.
export { registerAgentLegMetrics, registerTunnelHealthMetrics } from './metrics.js';
