// Multicluster service export: broker, join, ServiceExport -> broker -> ServiceImport sync,
// diagnose, and the records `strait show` prints.
export {
  encodeBrokerInfo,
  parseBrokerInfo,
  generatePsk,
  fingerprint,
  PSK_BYTES,
  KNOWN_COMPONENTS,
  type BrokerInfo,
  type Component,
} from './broker-info.js';
export { deployBroker, describeBroker, checkBrokerInfoCurrent, type DeployBrokerOptions, type DeployedBroker, type BrokerDescription } from './broker.js';
export {
  joinCluster,
  readJoin,
  listJoinedClusters,
  clusterRecord,
  networkOf,
  CABLE_DRIVERS,
  type JoinOptions,
  type JoinResult,
  type JoinSettings,
  type CableDriver,
} from './join.js';
export { findOverlaps, findAllOverlaps, validateNetwork, type ClusterNetwork, type CidrOverlap } from './network.js';
export { diagnose, type DiagnoseCheck, type DiagnoseOptions, type CheckStatus } from './diagnose.js';
export { MulticlusterAgent, type AgentOptions } from './agent.js';
export {
  derivedServiceName,
  derivedService,
  derivedPorts,
  acceptedPorts,
  clustersetIPsOf,
  ANN_DERIVED_SERVICE,
  LABEL_APP_MANAGED_BY,
  LABEL_K8S_SERVICE_NAME,
  type DerivedServiceInput,
} from './derived-service.js';
export { LABEL_MIRROR, ANN_MIRROR_OF, mirrorSlice, mirrorSliceName } from './endpointslice-mirror.js';
export { BrokerReach, BROKER_PROBE_MS, BROKER_PROBE_TIMEOUT_MS, type BrokerReachState } from './broker-reach.js';
export { aggregate, exportFromSlice, type Aggregate, type ClusterExport, type ServicePort, type SliceEndpoint, type ImportType } from './aggregate.js';
export { MulticlusterMetrics } from './metrics.js';
export { REASON, MESSAGE, type Condition } from './conditions.js';
export * from './names.js';
export { K as MC_KINDS } from './store-util.js';
export { WorkLanes, processLanes } from './lanes.js';
export {
  readEndpoint,
  readGateway,
  gatewayClusterOf,
  withRemoteGateways,
  connectedClusters,
  formatRttNs,
  statusText,
  type EndpointRow,
  type ConnectionRow,
  type GatewayRow,
} from './records.js';
export {
  markGatewayPassive,
  publishGatewayRecords,
  STRAIT_HEALTH_FIELDS,
  startRecordsPublisher,
  steadyRecordsKey,
  submarinerShape,
  type GatewayRecords,
} from './records-sync.js';
export { CounterRates, MIN_WINDOW_MS, type ConnectionRate } from './counter-rates.js';
export { submarinerResource, submarinerStatus, writeSubmariner, publishSubmarinerGateways, type SubmarinerDeployment } from './submariner.js';
export { openBrokerByUrl, openBrokerOfCluster, openCurrentBroker, readJoinConnection, type JoinConnection } from './broker-connect.js';
export {
  deployKubernetesBroker,
  setupKubernetesClusterSide,
  brokerKubeconfig,
  brokerClientRules,
  BROKER_CLIENT,
  BROKER_TOKEN_SECONDS,
  type DeployKubernetesBrokerOptions,
  type KubernetesBrokerInfo,
  type KubernetesClusterSideOptions,
} from './broker-kube.js';
export { bootstrapClusterSet, type BootstrapOptions } from './bootstrap.js';
export { verifyCluster, verifyRecords, type VerifyCheck, type RecordCheck, type ResolveA } from './verify.js';
