// Node agent configuration (JSON or YAML file, or an object from the world).
import { AGENT_RETURN_PATH_MARK, AGENT_RETURN_PATH_TABLE } from '../return-path/index.js';
import { defineConfig, parseCidr, type ConfigSchema } from '../../../base/config/index.js';

export interface NodeAgentConfig {
  nodeName: string;
  /** remote clusters' CIDRs: routed into the TUN device, sent over VXLAN to the gateway */
  remoteSubnets: string[];
  /** standby: the cluster's other gateway nodes (HA); their announcement moves the agent to them */
  gateway: { address: string; port: number; standby: string[] };
  /** mtu: of the node network (VXLAN datagrams to the gateway fit it) */
  vxlan: { listen: string; port: number; vni: number; mtu: number };
  /**
   * offload (default): the TUN device hands over TCP super-packets; they reach a strait gateway
   * in VXLAN extension fragments (after its hello-ack) and are segmented in software otherwise
   */
  tun: { name: string; mtu: number; offload: boolean };
  /**
   * Kubernetes Services across clusters: replies of connections from the remote subnets that
   * reached this node through the node network (kube-proxy DNATed them on the gateway node)
   * go back through the active gateway's node (its conntrack un-DNATs them), not into the TUN
   * device: connection mark bit `mark`, routing table `table` (return-path/)
   */
  kubeProxyReturnPath: { enabled: boolean; mark: number; table: number };
  metrics: { listen: string; port: number };
}

const ip = { type: 'string', pattern: '^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$' } as const;
const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;

const schema: ConfigSchema<NodeAgentConfig> = {
  type: 'object',
  additionalProperties: false,
  required: ['remoteSubnets', 'gateway'],
  properties: {
    nodeName: { type: 'string', default: 'node' },
    remoteSubnets: { type: 'array', items: { type: 'string' } },
    gateway: {
      type: 'object',
      additionalProperties: false,
      required: ['address'],
      properties: { address: ip, port: { ...port, default: 4800 }, standby: { type: 'array', items: ip, default: [] } },
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
        mtu: { type: 'integer', minimum: 576, maximum: 9000, default: 1500 },
      },
    },
    tun: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: {
        name: { type: 'string', maxLength: 15, default: 'strait0' },
        mtu: { type: 'integer', minimum: 576, maximum: 9000, default: 1400 },
        offload: { type: 'boolean', default: true },
      },
    },
    kubeProxyReturnPath: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: {
        enabled: { type: 'boolean', default: false },
        // one bit, clear of kube-proxy's 0x4000/0x8000
        mark: {
          type: 'integer',
          enum: Array.from({ length: 31 }, (_, i) => 2 ** i).filter((m) => m !== 0x4000 && m !== 0x8000),
          default: AGENT_RETURN_PATH_MARK,
        },
        table: { type: 'integer', minimum: 1, maximum: 252, default: AGENT_RETURN_PATH_TABLE },
      },
    },
    metrics: {
      type: 'object',
      additionalProperties: false,
      default: {} as never,
      required: [],
      properties: { listen: { type: 'string', default: '127.0.0.1' }, port: { ...port, default: 9465 } },
    },
  },
};

const definition = defineConfig<NodeAgentConfig>(schema, { renamed: { remoteCIDRs: 'remoteSubnets' } });

export function parseNodeAgentConfig(input: unknown, where = 'node agent config'): Readonly<NodeAgentConfig> {
  const c = definition.parse(input, where);
  c.remoteSubnets.forEach((s, i) => parseCidr(s, `${where}: remoteSubnets[${i}]`));
  return c;
}
