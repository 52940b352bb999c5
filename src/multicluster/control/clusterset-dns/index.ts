// clusterset.local DNS: the zone (answers), its feed from a cluster's store, and the
// UDP/TCP server (dns2 codec) that answers it and forwards everything else upstream.
export {
  ClustersetZone,
  ZONE,
  TTL,
  type ZoneService,
  type ZoneCluster,
  type ZoneEndpoint,
  type ZonePort,
  type ClusterHealth,
  type Answer,
  type Rr,
} from './zone.js';
export { ZoneSource } from './source.js';
export { startClustersetDns, ClustersetDnsServer, type ClustersetDns, type ClustersetDnsOptions } from './server.js';
export { DnsCounters, registerDnsMetrics, type LabelledCounters } from './metrics.js';
