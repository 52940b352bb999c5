// Cluster DNS: <svc>.<ns>.svc.cluster.local from Services and endpoints (TTL 5), over
// UDP and TCP (dns2). Further zones (clusterset.local) plug in as DnsResolvers.
export { ClusterZone, TTL_SECONDS, type DnsAnswer, type DnsResolver, type ServiceRecord } from './zone.js';
export { startDnsServer, type DnsServerOptions, type DnsStats, type RunningDnsServer } from './server.js';
