// Gateway HA: the Lease that picks a cluster's active gateway (lease.ts), and the gateway
// daemon's part of it (daemon-ha.ts: the lease's store, the liveness link, the records).
export { LEASE_KIND, ANN_LEASE_MS, LeaseElector, microTime, type LeaseSpec, type ElectorOptions } from './lease.js';
export { startGatewayHa, type GatewayHa } from './daemon-ha.js';
