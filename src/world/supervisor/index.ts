// The local world: clusters, nodes and pods built from network namespaces inside a
// private tree, with service proxies, cluster DNS, workloads and a process table.
export { parseWorld, loadWorld, DEFAULT_WORLD, IMAGES, type WorldFile, type WorldCluster, type Image } from '../world-file/index.js';
export {
  buildPlan,
  selectPods,
  hostAt,
  sliceAt,
  nameSuffix,
  DNS_DOMAIN,
  WORLD_GITHOST_PORT,
  WORLD_CONTROL_PORT,
  CLUSTER_DNS_PORT,
  type WorldPlan,
  type PlanCluster,
  type PlanNode,
  type PlanPod,
  type PlanService,
} from './plan.js';
export { clusterObjects, MANAGED_BY, NETNS_ANNOTATION } from './objects.js';
export { serviceViews, type RefusedService, type ServiceViews } from './views.js';
export { clusterIpAdmission } from './cluster-ip.js';
export { ProcessTable, type Component, type ComponentStatus } from './processes.js';
export { resolvConf } from './topology.js';
export { runWorld, type WorldOptions, type WorldState, type RunningWorld, type ComponentContext } from './supervisor.js';
export { startClusterSync, allocateClusterIP, type ClusterSync } from './cluster-sync.js';
export { startPodRuntime, type PodRuntime, type PodHooks } from './pod-runtime.js';
