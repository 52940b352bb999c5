// Shared parts of the multicluster commands: where their stores are, and the show tables.
export { openClusterStore, openBrokerFromInfo, openBrokerOfCluster, readWorld, type StoreAccess, type WorldCluster } from './stores.js';
export { renderShow, renderSection, showJson, SHOW_ALL, COLUMNS, type ShowData, type ShowWhat, type VersionRow } from './show-tables.js';
export { collectShow, COMPONENTS } from './collect.js';
export { udpResolver } from './udp-resolver.js';
export { verifyTraffic, VERIFY_KINDS, type TrafficCheck, type TrafficOptions, type VerifyKind } from './verify-traffic.js';
