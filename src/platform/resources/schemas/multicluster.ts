// Multicluster resources (SPEC.md area C): the MCS API ServiceExport/ServiceImport and the
// cluster-link records with Submariner's JSON field names (cluster_id, cable_name, ...).
import { anyObject, arr, bool, condition, enumOf, int, intOrString, ipv4Cidr, kindSchema, map, obj, port, protocol, str, timestamp, type Schema } from './builders.js';

// Submariner's field names, or strait's flat ones (clusterId, endpointIP, ...) that the
// world's store keeps; a rule (rules.ts) asks for a cluster ID in either name.
const endpointSpec = obj({
  cluster_id: str({ minLength: 1, description: 'a non-empty cluster ID' }),
  clusterId: str({ minLength: 1, description: 'a non-empty cluster ID' }),
  endpointIP: str(), publicIP: str(), cableDriver: str(),
  cable_name: str(),
  healthCheckIP: str(),
  hostname: str(),
  subnets: arr(ipv4Cidr),
  private_ip: str(),
  public_ip: str(),
  nat_enabled: bool,
  backend: str(),
  backend_config: map(),
});

// strings as Submariner writes them ("1.2ms"), or nanoseconds, which records.ts also reads
const latency = obj({ last: intOrString, min: intOrString, average: intOrString, max: intOrString, stdDev: intOrString });

export const multiclusterSchemas: Record<string, Schema> = {
  ServiceExport: kindSchema({
    spec: anyObject,
    status: obj({ conditions: arr(condition) }),
  }),
  ServiceImport: kindSchema({
    spec: obj({
      type: enumOf('ClusterSetIP', 'Headless'),
      ports: arr(obj({ name: str(), protocol, appProtocol: str(), port }, ['port'])),
      ips: arr(str()),
      sessionAffinity: enumOf('None', 'ClientIP'),
      sessionAffinityConfig: anyObject,
    }, ['type']),
    status: obj({ clusters: arr(obj({ cluster: str() }, ['cluster'])), conditions: arr(condition) }),
  }, { required: ['spec'] }),
  Endpoint: kindSchema({ spec: endpointSpec }, { required: ['spec'] }),
  Cluster: kindSchema({
    spec: obj({
      cluster_id: str({ minLength: 1, description: 'a non-empty cluster ID' }),
      color_codes: arr(str()),
      service_cidr: arr(ipv4Cidr),
      cluster_cidr: arr(ipv4Cidr),
      global_cidr: arr(ipv4Cidr),
      network_plugin: str(),
    }, ['cluster_id']),
  }, { required: ['spec'] }),
  Gateway: kindSchema({
    status: obj({
      version: str(),
      haStatus: enumOf('active', 'passive'),
      localEndpoint: endpointSpec,
      statusFailure: str(),
      summary: str(),
      lastUpdated: timestamp,
      connections: arr(obj({
        status: enumOf('connecting', 'connected', 'error'),
        statusMessage: str(),
        endpoint: endpointSpec,
        usingIP: str(),
        usingNAT: bool,
        latencyRTT: latency,
        rttAverageMs: { type: 'number', minimum: 0 },
        lastHandshake: timestamp,
        bytesIn: int(0), bytesOut: int(0),
      }, ['status'])),
    }),
  }),
};
