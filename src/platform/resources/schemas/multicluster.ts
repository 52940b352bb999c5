// Multicluster resources (docs/multicluster.md): the MCS API ServiceExport/ServiceImport and the
// cluster-link records with Submariner's JSON field names (cluster_id, cable_name, ...).
import { anyObject, arr, bool, condition, enumOf, int, ipv4Cidr, kindSchema, map, obj, port, protocol, str, timestamp, type Schema } from './builders.js';

const endpointSpec = obj({
  cluster_id: str({ minLength: 1, description: 'a non-empty cluster ID' }),
  cable_name: str(),
  healthCheckIP: str(),
  hostname: str(),
  subnets: arr(ipv4Cidr),
  private_ip: str(),
  public_ip: str(),
  nat_enabled: bool,
  backend: str(),
  backend_config: map(),
}, ['cluster_id', 'cable_name', 'hostname']);

const latency = obj({ last: str(), min: str(), average: str(), max: str(), stdDev: str() });

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
