// The configuration of the multicluster daemon (`strait-multicluster --config FILE`,
// docs/multicluster.md): one cluster's multicluster control in the local world.
import { defineConfig, type ConfigSchema } from '../../../base/config/index.js';

export interface MulticlusterDaemonConfig {
  clusterId: string;
  /** the local world's store API; the cluster's store is `clusterId`, the broker comes from the join */
  store: { socket: string; tokenFile: string };
  dns: { enabled: boolean; listen: string; port: number; upstream?: string; rateLimitQps: number; rateLimitBurst: number };
  /** the gateway daemon's /records URL, polled and published */
  records?: { url: string; intervalMs: number; standbyUrls: string[] };
  metrics: { listen: string; port: number };
  resyncMs: number;
  /**
   * a clusterset IP (ServiceImport spec.ips) per ClusterSetIP import, allocated from the
   * cluster's service CIDR through a derived Service; false: none, and clusterset DNS answers
   * an exporting cluster's ClusterIP
   */
  clustersetIP: boolean;
  /** after the join: write the join's PSK (Secret submariner-ipsec-psk, base64 text) here, mode 0600, for the gateway daemons */
  pskFile?: string;
  /** deploy the broker and join every listed cluster when this cluster has not joined (what `strait up` does, on one cluster) */
  bootstrap?: { brokerCluster: string; brokerInfoFile: string; clusters: { clusterId: string; clusterCIDR: string; serviceCIDR: string }[] };
}

const schema: ConfigSchema<MulticlusterDaemonConfig> = {
  type: 'object',
  additionalProperties: false,
  required: ['clusterId', 'store'],
  properties: {
    clusterId: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' },
    store: {
      type: 'object',
      additionalProperties: false,
      required: ['socket', 'tokenFile'],
      properties: { socket: { type: 'string', minLength: 1 }, tokenFile: { type: 'string', minLength: 1 } },
    },
    dns: {
      type: 'object',
      additionalProperties: false,
      required: [],
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true },
        listen: { type: 'string', default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 53 },
        upstream: { type: 'string', nullable: true, pattern: '^[0-9.]+:[0-9]+$' },
        rateLimitQps: { type: 'number', minimum: 1, default: 10000 },
        rateLimitBurst: { type: 'number', minimum: 1, default: 20000 },
      },
    },
    records: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      nullable: true,
      properties: {
        url: { type: 'string', pattern: '^http://' },
        intervalMs: { type: 'integer', minimum: 100, default: 500 },
        // HA: the cluster's second gateway node (both publish a Gateway record; only the active one an Endpoint)
        standbyUrls: { type: 'array', items: { type: 'string', pattern: '^http://' }, default: [] },
      },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      required: [],
      default: {},
      properties: { listen: { type: 'string', default: '127.0.0.1' }, port: { type: 'integer', minimum: 0, maximum: 65535, default: 9470 } },
    },
    resyncMs: { type: 'integer', minimum: 0, default: 0 },
    clustersetIP: { type: 'boolean', default: true },
    pskFile: { type: 'string', nullable: true, minLength: 1 },
    bootstrap: {
      type: 'object',
      additionalProperties: false,
      required: ['brokerCluster', 'brokerInfoFile', 'clusters'],
      nullable: true,
      properties: {
        brokerCluster: { type: 'string' },
        brokerInfoFile: { type: 'string' },
        clusters: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['clusterId', 'clusterCIDR', 'serviceCIDR'],
            properties: { clusterId: { type: 'string' }, clusterCIDR: { type: 'string' }, serviceCIDR: { type: 'string' } },
          },
        },
      },
    },
  },
} as unknown as ConfigSchema<MulticlusterDaemonConfig>;

export const multiclusterDaemonConfig = defineConfig(schema);
