// The multicluster control, assembled once: run.ts (export/import sync + clusterset.local DNS
// + join following) for the world's multicluster daemon (daemon.ts) and the control module in
// Kubernetes mode.
export { runMulticluster, type ClustersetDnsSettings, type MulticlusterRunOptions, type RunningMulticlusterControl } from './run.js';
export { followJoin, type CurrentJoin, type JoinFollowOptions } from './join-follow.js';
export { runMulticlusterDaemon, type RunningMulticluster } from './daemon.js';
export { multiclusterDaemonConfig, type MulticlusterDaemonConfig } from './config.js';
export { clustersetIPFromEnv, dnsSettingsFromEnv } from './env.js';
