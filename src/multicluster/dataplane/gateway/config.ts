// Gateway daemon configuration (JSON or YAML file, or an object from the world).
import { defineConfig, parseCidr, type ConfigSchema } from '../../../base/config/index.js';
import { E } from '../../../base/errors/index.js';

export interface GatewayPeerConfig {
  clusterId: string;
  /** public IPv4 address of the remote cluster's active gateway */
  endpoint: string;
  port: number;
  subnets: string[];
  /** the remote cluster's other gateway nodes (HA): their address is no NAT */
  standby: string[];
}

/** HA: this cluster has two gateway nodes; the lease in the cluster's store says which one is active. */
export interface GatewayHaConfig {
  /** every gateway node of the cluster (this one included): node name = lease holder identity */
  members: { name: string; address: string }[];
  /**
   * the liveness link (takeover at once when the active gateway's process dies): with `members`,
   * or in Kubernetes mode from the gateway nodes; false: the lease expiry alone
   */
  liveness: boolean;
  /** the Lease object (namespace/name) in the cluster's store */
  leaseNamespace: string;
  leaseName: string;
  leaseDurationMs: number;
  renewMs: number;
  /** TCP port of the liveness link between the gateways (the passive one holds a connection to the active one) */
  port: number;
  /** announcements to the node agents while active */
  announceMs: number;
  /** the store API (the world's), with the bearer token file; absent in Kubernetes mode */
  store?: { socket: string; tokenFile: string; cluster: string };
  /**
   * Kubernetes mode (STRAIT_STORE=kubernetes, or `kubeconfig` set): a real Lease in the pod's
   * namespace with client-go's leader-election timings (seconds)
   */
  kubernetes: { kubeconfig?: string; leaseDurationSeconds: number; renewDeadlineSeconds: number; retryPeriodSeconds: number };
}

/**
 * Whether the HA Lease lives in a Kubernetes API server (STRAIT_STORE=kubernetes, or
 * ha.kubernetes.kubeconfig set), else in the world's store: one rule for the daemon that loads
 * the Kubernetes client ahead (control/gateway/run.ts) and the Lease store it opens (gateway-ha).
 */
export function haInKubernetes(kubeconfig: unknown, env: NodeJS.ProcessEnv): boolean {
  return env['STRAIT_STORE'] === 'kubernetes' || typeof kubeconfig === 'string';
}

export interface GatewayNodeConfig {
  /** node (agent) address for VXLAN */
  address: string;
  /** pod CIDR(s) on that node: decrypted packets for them go back over VXLAN to its agent */
  podCIDRs: string[];
}

export interface GatewayConfig {
  clusterId: string;
  /** gateway (node) name shown in records */
  name: string;
  /** the PSK text from the broker-info file; or pskFile */
  psk?: string;
  pskFile?: string;
  localSubnets: string[];
  /** mtu: of the path between the gateways (outer datagrams, fragments included, fit it) */
  tunnel: { listen: string; port: number; publicIP?: string; privateIP?: string; mtu: number };
  vxlan: { listen: string; port: number; vni: number; agentPort: number };
  /**
   * offload (default): the TUN device hands over TCP super-packets (IFF_VNET_HDR + TSO), sealed
   * once and sent in path-sized fragments to peers that negotiated it, segmented in software for others
   */
  tun: { name: string; mtu: number; offload: boolean };
  peers: GatewayPeerConfig[];
  /** the cluster's nodes (node agents): the only senders of VXLAN taken, each for its pod CIDRs */
  nodes: GatewayNodeConfig[];
  /**
   * where the node list comes from: 'config' (`nodes`, the world), or 'kubernetes' (the
   * Node objects: InternalIP and spec.podCIDRs, watched; `nodes` is the list until then)
   */
  nodesFrom: 'config' | 'kubernetes';
  /**
   * Kubernetes Services across clusters (kube-proxy on this node): keep the remote clusters'
   * sources out of kube-proxy's masquerade, so that a Service's pods see the client pod's
   * address (the agents route the replies back through this node: return-path/)
   */
  kubeProxyReturnPath: boolean;
  metrics: { listen: string; port: number };
  timers: { keepaliveMs: number; deadAfterMs: number; rekeyAfterMs: number; rekeyTimeoutMs: number; handshakeAttempts: number };
  ha?: GatewayHaConfig;
}

const ip = { type: 'string', pattern: '^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$' } as const;
const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;
const cidrs = { type: 'array', items: { type: 'string' } } as const;

const schema: ConfigSchema<GatewayConfig> = {
  type: 'object',
  additionalProperties: false,
  required: ['clusterId', 'localSubnets', 'peers'],
  properties: {
    clusterId: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{0,62}$' },
    name: { type: 'string', default: 'gateway' },
    psk: { type: 'string', minLength: 16, nullable: true },
    pskFile: { type: 'string', nullable: true },
    localSubnets: cidrs,
    tunnel: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: {
        listen: { ...ip, default: '0.0.0.0' },
        port: { ...port, default: 4500 },
        publicIP: { ...ip, nullable: true },
        privateIP: { ...ip, nullable: true },
        mtu: { type: 'integer', minimum: 576, maximum: 9000, default: 1500 },
      },
    },
    vxlan: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: {
        listen: { ...ip, default: '0.0.0.0' },
        port: { ...port, default: 4800 },
        vni: { type: 'integer', minimum: 0, maximum: 16777215, default: 100 },
        agentPort: { ...port, default: 4800 },
      },
    },
    tun: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: {
        name: { type: 'string', maxLength: 15, default: 'strait-gw' },
        mtu: { type: 'integer', minimum: 576, maximum: 9000, default: 1400 },
        offload: { type: 'boolean', default: true },
      },
    },
    peers: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['clusterId', 'endpoint', 'subnets'],
        properties: {
          clusterId: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{0,62}$' },
          endpoint: ip,
          port: { ...port, default: 4500 },
          subnets: cidrs,
          standby: { type: 'array', items: ip, default: [] },
        },
      },
    },
    nodes: {
      type: 'array',
      default: [],
      items: { type: 'object', additionalProperties: false, required: ['address', 'podCIDRs'], properties: { address: ip, podCIDRs: cidrs } },
    },
    nodesFrom: { type: 'string', enum: ['config', 'kubernetes'], default: 'config' },
    kubeProxyReturnPath: { type: 'boolean', default: false },
    metrics: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: { listen: { type: 'string', default: '127.0.0.1' }, port: { ...port, default: 9464 } },
    },
    ha: {
      type: 'object',
      additionalProperties: false,
      nullable: true,
      required: [],
      properties: {
        members: {
          type: 'array',
          minItems: 0,
          maxItems: 2,
          default: [],
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'address'],
            properties: { name: { type: 'string', minLength: 1 }, address: ip },
          },
        },
        liveness: { type: 'boolean', default: true },
        leaseNamespace: { type: 'string', default: 'submariner-operator' },
        leaseName: { type: 'string', default: 'strait-gateway' },
        leaseDurationMs: { type: 'integer', minimum: 200, maximum: 60000, default: 1000 },
        renewMs: { type: 'integer', minimum: 50, maximum: 20000, default: 200 },
        port: { ...port, default: 4801 },
        announceMs: { type: 'integer', minimum: 100, default: 1000 },
        store: {
          type: 'object',
          additionalProperties: false,
          nullable: true,
          required: ['socket', 'tokenFile', 'cluster'],
          properties: { socket: { type: 'string', minLength: 1 }, tokenFile: { type: 'string', minLength: 1 }, cluster: { type: 'string', minLength: 1 } },
        },
        kubernetes: {
          type: 'object',
          additionalProperties: false,
          default: {} as never,
          required: [],
          properties: {
            kubeconfig: { type: 'string', minLength: 1, nullable: true },
            leaseDurationSeconds: { type: 'integer', minimum: 2, maximum: 3600, default: 15 },
            renewDeadlineSeconds: { type: 'integer', minimum: 1, maximum: 3600, default: 10 },
            retryPeriodSeconds: { type: 'integer', minimum: 1, maximum: 600, default: 2 },
          },
        },
      },
    },
    timers: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: {
        keepaliveMs: { type: 'integer', minimum: 50, default: 200 },
        deadAfterMs: { type: 'integer', minimum: 300, default: 5000 },
        rekeyAfterMs: { type: 'integer', minimum: 1000, default: 120000 },
        rekeyTimeoutMs: { type: 'integer', minimum: 100, default: 5000 },
        handshakeAttempts: { type: 'integer', minimum: 1, default: 3 },
      },
    },
  },
};

const definition = defineConfig<GatewayConfig>(schema, { renamed: { remotes: 'peers', cidrs: 'localSubnets' } });

/** Validate a gateway configuration: schema, CIDRs, and a PSK from exactly one source. */
export function parseGatewayConfig(input: unknown, where = 'gateway config'): Readonly<GatewayConfig> {
  const c = definition.parse(input, where);
  c.localSubnets.forEach((s, i) => parseCidr(s, `${where}: localSubnets[${i}]`));
  c.peers.forEach((p, i) => p.subnets.forEach((s, j) => parseCidr(s, `${where}: peers[${i}].subnets[${j}]`)));
  c.nodes.forEach((n, i) => n.podCIDRs.forEach((s, j) => parseCidr(s, `${where}: nodes[${i}].podCIDRs[${j}]`)));
  if (c.ha) {
    const k = c.ha.kubernetes;
    if (!c.ha.store && c.ha.members.length === 0) {
      // Kubernetes mode without the liveness link: the lease expiry alone decides
    } else if (c.ha.members.length !== 2) {
      throw E.configInvalid(
        `${where}: ha.members`,
        c.ha.members.map((m) => m.name).join(','),
        'must list both gateway nodes of the cluster (name and underlay address)',
      );
    } else if (!c.ha.members.some((m) => m.name === c.name))
      throw E.configInvalid(`${where}: ha.members`, c.ha.members.map((m) => m.name).join(','), `must list this gateway's own name "${c.name}"`);
    if (c.ha.renewMs * 2 > c.ha.leaseDurationMs)
      throw E.configInvalid(`${where}: ha.renewMs`, c.ha.renewMs, `must be at most half of ha.leaseDurationMs (${c.ha.leaseDurationMs})`);
    // client-go: leaseDuration > renewDeadline > retryPeriod x 1.2
    if (k.renewDeadlineSeconds >= k.leaseDurationSeconds)
      throw E.configInvalid(
        `${where}: ha.kubernetes.renewDeadlineSeconds`,
        k.renewDeadlineSeconds,
        `must be less than ha.kubernetes.leaseDurationSeconds (${k.leaseDurationSeconds})`,
      );
    if (k.retryPeriodSeconds * 1.2 >= k.renewDeadlineSeconds)
      throw E.configInvalid(
        `${where}: ha.kubernetes.retryPeriodSeconds`,
        k.retryPeriodSeconds,
        `must be less than ha.kubernetes.renewDeadlineSeconds / 1.2 (${k.renewDeadlineSeconds / 1.2})`,
      );
  }
  // the Endpoint record publishes these addresses: the unspecified address reaches no peer
  for (const f of ['publicIP', 'privateIP'] as const) {
    if (c.tunnel[f] === '0.0.0.0')
      throw E.configInvalid(
        `${where}: tunnel.${f}`,
        c.tunnel[f],
        "must be an address peers can reach, not the unspecified address 0.0.0.0 (leave it unset to publish the tunnel's own address)",
      );
  }
  if ((c.psk === undefined || c.psk === null) === (c.pskFile === undefined || c.pskFile === null)) {
    throw E.configInvalid(`${where}: psk`, c.psk ?? c.pskFile ?? null, 'set exactly one of psk (the broker-info PSK text) or pskFile');
  }
  return c;
}
