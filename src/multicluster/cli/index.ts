// The multicluster CLI: broker, join, export, show and diagnose commands, where their stores
// are, and the show tables.
export {
  openClusterStore,
  openBrokerFromInfo,
  openBrokerOfCluster,
  openTarget,
  readRunningWorld,
  readWorld,
  CLUSTER_KINDS,
  BROKER_KINDS,
  type ClusterTarget,
  type StoreAccess,
  type TargetOptions,
  type WorldCluster,
} from './stores.js';
export {
  renderShow,
  renderSection,
  showJson,
  SHOW_ALL,
  SHOW_SECTIONS,
  COLUMNS,
  connectionRow,
  type ClusterRow,
  type ExportRow,
  type ImportRow,
  type ShowData,
  type ShowWhat,
  type VersionRow,
} from './show-tables.js';
export { collectShow, COMPONENTS, kubeComponents, worldComponents } from './collect.js';
export { udpResolver } from './udp-resolver.js';
export { registerBrokerCommands } from './broker.js';
export { registerJoinCommand } from './join.js';
export { registerExportCommands } from './export.js';
export { registerShowCommands } from './show.js';
export { registerDiagnoseCommand } from './diagnose.js';
