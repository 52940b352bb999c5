// Multicluster resources (docs/multicluster.md): the MCS API ServiceExport/ServiceImport and the
// cluster-link records with Submariner's JSON field names (cluster_id, cable_name, ...).
// The submariner.io kinds accept every object Submariner's own CRDs accept (the same
// fields and types; test/fixtures/submariner-crds holds those schemas and
// test/integration/submariner-crds-kubernetes.test.ts checks both against the API server):
// strait's CRDs can stand in for Submariner's and the other way round.
import {
  anyObject,
  arr,
  bool,
  condition,
  enumOf,
  int,
  intOrString,
  ipv4Cidr,
  kindSchema,
  map,
  obj,
  port,
  protocol,
  str,
  timestamp,
  type Schema,
} from './builders.js';

/** Submariner's subnets and CIDR lists: IPv4 or IPv6 (it runs dual-stack) */
const v4 = String(ipv4Cidr['pattern']).slice(1, -1);
const cidr: Schema = str({
  pattern: `^(${v4}|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$`,
  description: 'a CIDR such as 10.1.0.0/16 or fd00:1::/64',
});
const clusterId: Schema = str({ minLength: 1, maxLength: 63, description: 'a non-empty cluster ID of at most 63 characters' });
/** Submariner's dual-stack lists (an IPv4 and an IPv6 address) */
const twoIPs: Schema = arr(str());

// Submariner's field names, or strait's flat ones (clusterId, endpointIP, ...) that the
// world's store keeps: nothing is required here, a rule (rules.ts) asks for a cluster ID
// in either name.
const endpointSpec = obj({
  cluster_id: clusterId,
  clusterId,
  endpointIP: str(),
  publicIP: str(),
  cableDriver: str(),
  cable_name: str(),
  healthCheckIP: str(),
  healthCheckIPs: twoIPs,
  hostname: str(),
  subnets: arr(cidr),
  private_ip: str(),
  privateIPs: twoIPs,
  public_ip: str(),
  publicIPs: twoIPs,
  nat_enabled: bool,
  backend: str(),
  backend_config: map(),
});

// strings as Submariner writes them ("1.2ms"), or nanoseconds, which records.ts also reads
const latency = obj({ last: intOrString, min: intOrString, average: intOrString, max: intOrString, stdDev: intOrString });

/**
 * strait's health of the data path beside Submariner's fields (docs/faults.md): a
 * connection's reason and probe loss, the active gateway's VXLAN legs to its node agents.
 * Submariner's own CRDs do not have them: there the API server drops them on a write (a
 * warning, not an error) and readers fall back to the reason that prefixes statusMessage.
 */
const lossPercent: Schema = str({
  pattern: '^((100|[0-9]{1,2})(\\.[0-9])?%)?$',
  description: "probes lost in the health window, e.g. 0% or 26.8% ('' before the first probe)",
});
const nodeLeg: Schema = obj(
  {
    address: str({ description: "the node's address the agent sends its VXLAN hellos from" }),
    status: enumOf('ok', 'broken'),
    message: str(),
  },
  ['address', 'status'],
);

/** submariner.io/v1 GatewayStatus (strait's world records add summary, lastUpdated and counters; every shape adds nodeLegs, reason and loss) */
const gatewayStatus = obj({
  version: str(),
  haStatus: enumOf('active', 'passive'),
  localEndpoint: endpointSpec,
  statusFailure: str(),
  summary: str(),
  lastUpdated: timestamp,
  nodeLegs: arr(nodeLeg),
  connections: arr(
    obj(
      {
        status: enumOf('connecting', 'connected', 'error'),
        statusMessage: str(),
        reason: str({ description: 'why it is not connected: psk-mismatch, no-handshake-answer, loss 100%' }),
        loss: lossPercent,
        endpoint: endpointSpec,
        usingIP: str(),
        usingNAT: bool,
        latencyRTT: latency,
        rttAverageMs: { type: 'number', minimum: 0 },
        lastHandshake: timestamp,
        bytesIn: int(0),
        bytesOut: int(0),
      },
      ['status'],
    ),
  ),
});

/** submariner.io/v1alpha1 Submariner, as Submariner's operator defines it */
const submarinerSpec = obj(
  {
    broker: str(),
    brokerK8sApiServer: str(),
    brokerK8sApiServerToken: str(),
    brokerK8sCA: str(),
    brokerK8sInsecure: bool,
    brokerK8sRemoteNamespace: str(),
    brokerK8sSecret: str(),
    cableDriver: str(),
    ceIPSecDebug: bool,
    ceIPSecForceUDPEncaps: bool,
    ceIPSecIKEPort: int(),
    ceIPSecNATTPort: int(),
    ceIPSecPSK: str(),
    ceIPSecPSKSecret: str(),
    ceIPSecPreferredServer: bool,
    clusterCIDR: str(),
    clusterID: str(),
    colorCodes: str(),
    connectionHealthCheck: obj({ enabled: bool, intervalSeconds: int(), maxPacketLossCount: int() }),
    coreDNSCustomConfig: obj({ configMapName: str(), namespace: str() }),
    customDomains: arr(str()),
    debug: bool,
    globalCIDR: str(),
    imageOverrides: map(),
    loadBalancerEnabled: bool,
    airGappedDeployment: bool,
    namespace: str(),
    natEnabled: bool,
    repository: str(),
    serviceCIDR: str(),
    serviceDiscoveryEnabled: bool,
    version: str(),
  },
  ['broker', 'brokerK8sApiServer', 'brokerK8sRemoteNamespace', 'ceIPSecDebug', 'clusterCIDR', 'clusterID', 'debug', 'namespace', 'natEnabled', 'serviceCIDR'],
);

const submarinerStatus = obj(
  {
    clusterID: str(),
    natEnabled: bool,
    airGappedDeployment: bool,
    colorCodes: str(),
    clusterCIDR: str(),
    serviceCIDR: str(),
    globalCIDR: str(),
    networkPlugin: str(),
    gateways: arr(gatewayStatus),
    deploymentInfo: obj({ kubernetesType: str(), kubernetesTypeVersion: str(), kubernetesVersion: str(), cloudProvider: str() }),
    // the operator's view of its DaemonSets and load balancer: strait writes none of them
    gatewayDaemonSetStatus: anyObject,
    routeAgentDaemonSetStatus: anyObject,
    globalnetDaemonSetStatus: anyObject,
    loadBalancerStatus: anyObject,
  },
  ['clusterID', 'natEnabled'],
);

/** submariner.io/v1alpha1 Broker, as Submariner's operator defines it (its status has no fields) */
const brokerSpec = obj({
  components: arr(str()),
  defaultCustomDomains: arr(str()),
  globalnetCIDRRange: str(),
  clustersetIPCIDRRange: str(),
  defaultGlobalnetClusterSize: int(0),
  globalnetEnabled: bool,
  clustersetIPEnabled: bool,
});

export const multiclusterSchemas: Record<string, Schema> = {
  // v1alpha1 and v1beta1 share this schema (as upstream's two versions do): docs/multicluster.md, "API versions"
  ServiceExport: kindSchema({
    spec: obj({ exportedLabels: map(), exportedAnnotations: map() }),
    status: obj({ conditions: arr(condition) }),
  }),
  ServiceImport: kindSchema(
    {
      spec: obj(
        {
          type: enumOf('ClusterSetIP', 'Headless'),
          ports: arr(obj({ name: str(), protocol, appProtocol: str(), port }, ['port'])),
          ips: arr(str(), { maxItems: 2 }),
          ipFamilies: arr(enumOf('IPv4', 'IPv6'), { maxItems: 2 }),
          sessionAffinity: enumOf('None', 'ClientIP'),
          sessionAffinityConfig: obj({ clientIP: obj({ timeoutSeconds: int(1, 86400) }) }),
          internalTrafficPolicy: enumOf('Cluster', 'Local'),
          trafficDistribution: str(),
        },
        ['type'],
      ),
      status: obj({ clusters: arr(obj({ cluster: str() }, ['cluster'])), conditions: arr(condition) }),
    },
    { required: ['spec'] },
  ),
  Endpoint: kindSchema({ spec: endpointSpec }, { required: ['spec'] }),
  Cluster: kindSchema(
    {
      spec: obj(
        {
          cluster_id: clusterId,
          color_codes: arr(str()),
          service_cidr: arr(cidr),
          cluster_cidr: arr(cidr),
          global_cidr: arr(cidr),
        },
        ['cluster_id'],
      ),
    },
    { required: ['spec'] },
  ),
  Gateway: kindSchema({ status: gatewayStatus }),
  Submariner: kindSchema({ spec: submarinerSpec, status: submarinerStatus }),
  Broker: kindSchema({ spec: brokerSpec, status: obj({}) }),
};
