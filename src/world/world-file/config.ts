// The world file: clusters, nodes and workloads of a local world. Validated once
// (ajv through defineConfig: unknown keys refused), then checked for the rules a
// schema cannot say (CIDRs that overlap, one or two gateways, known nodes).
import { defineConfig, parseCidr, cidrsOverlap, type Cidr, type ConfigSchema } from '../../base/config/index.js';
import { E, isStraitError } from '../../base/errors/index.js';

export const IMAGES = ['strait/echo', 'strait/idle'] as const;
export type Image = (typeof IMAGES)[number];

export interface WorldNode {
  name: string;
  role: 'gateway' | 'worker';
}

export interface WorldDeployment {
  name: string;
  image: Image;
  replicas: number;
  /** port the workload listens on (echo) */
  port: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** pin every replica to this node */
  node?: string;
}

export interface WorldPod {
  name: string;
  image: Image;
  port: number;
  node?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface WorldServicePort {
  name?: string;
  port: number;
  targetPort?: number;
  protocol: 'TCP' | 'UDP';
}

export interface WorldService {
  name: string;
  /** default: { app: <name> } */
  selector?: Record<string, string>;
  ports: WorldServicePort[];
  /** headless: no ClusterIP; DNS answers with the pod IPs */
  headless: boolean;
}

export interface WorldNamespace {
  namespace: string;
  deployments: WorldDeployment[];
  pods: WorldPod[];
  services: WorldService[];
}

export interface WorldCluster {
  name: string;
  clusterCIDR: string;
  serviceCIDR: string;
  /** underlay subnet joining the cluster's nodes; default 172.18.<index>.0/24 */
  nodeCIDR?: string;
  /** prefix length of each node's slice of clusterCIDR */
  nodeCIDRMaskSize: number;
  nodes: WorldNode[];
  workloads: WorldNamespace[];
}

export interface WorldFile {
  clusters: WorldCluster[];
  /** the shared segment gateways' public IPs live on */
  internetCIDR: string;
  /** port each process's Prometheus /metrics listens on inside its namespace */
  metricsPort: number;
  /** run the gateway daemons and node agents that join the clusters (PSK tunnels, VXLAN) */
  tunnels: boolean;
  /** run the code-hosting server at http://<internet root IP>:3000 */
  githost: boolean;
  /** run the mesh (agent: CA, sidecars of injected pods; ingress gateway) in every cluster */
  mesh: boolean;
  /** how injected pods' proxies run: a sidecar process per pod, or one node-level proxy per node (docs/mesh-node.md) */
  meshDataplane: 'sidecar' | 'node';
}

const labels = { type: 'object', nullable: true, additionalProperties: { type: 'string' }, required: [] } as const;
const dnsName = { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' } as const;

/** A pod of the world file, alone or as a Deployment's template (which adds `replicas`). */
function workloadSchema<Extra extends object>(extra: Extra) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'image'],
    properties: {
      name: dnsName,
      image: { type: 'string', enum: [...IMAGES] },
      port: { type: 'integer', minimum: 1, maximum: 65535, default: 8080 },
      node: { ...dnsName, nullable: true },
      labels,
      annotations: labels,
      ...extra,
    },
  } as const;
}

const schema: ConfigSchema<WorldFile> = {
  type: 'object',
  additionalProperties: false,
  required: ['clusters'],
  properties: {
    internetCIDR: { type: 'string', default: '198.18.0.0/16' },
    metricsPort: { type: 'integer', minimum: 1, maximum: 65535, default: 9464 },
    tunnels: { type: 'boolean', default: true },
    githost: { type: 'boolean', default: true },
    mesh: { type: 'boolean', default: true },
    meshDataplane: { type: 'string', enum: ['sidecar', 'node'], default: 'sidecar' },
    clusters: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'clusterCIDR', 'serviceCIDR', 'nodes'],
        properties: {
          name: dnsName,
          clusterCIDR: { type: 'string' },
          serviceCIDR: { type: 'string' },
          nodeCIDR: { type: 'string', nullable: true },
          nodeCIDRMaskSize: { type: 'integer', minimum: 8, maximum: 29, default: 24 },
          nodes: {
            type: 'array',
            minItems: 2,
            maxItems: 64,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'role'],
              properties: { name: dnsName, role: { type: 'string', enum: ['gateway', 'worker'] } },
            },
          },
          workloads: {
            type: 'array',
            default: [],
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['namespace'],
              properties: {
                namespace: dnsName,
                deployments: {
                  type: 'array',
                  default: [],
                  items: workloadSchema({ replicas: { type: 'integer', minimum: 0, maximum: 50, default: 1 } }),
                },
                pods: {
                  type: 'array',
                  default: [],
                  items: workloadSchema({}),
                },
                services: {
                  type: 'array',
                  default: [],
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['name', 'ports'],
                    properties: {
                      name: dnsName,
                      selector: labels,
                      headless: { type: 'boolean', default: false },
                      ports: {
                        type: 'array',
                        minItems: 1,
                        items: {
                          type: 'object',
                          additionalProperties: false,
                          required: ['port'],
                          properties: {
                            name: { type: 'string', nullable: true },
                            port: { type: 'integer', minimum: 1, maximum: 65535 },
                            targetPort: { type: 'integer', minimum: 1, maximum: 65535, nullable: true },
                            protocol: { type: 'string', enum: ['TCP', 'UDP'], default: 'TCP' },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as unknown as ConfigSchema<WorldFile>;

const definition = defineConfig(schema, { prefix: 'world' });

/** The built-in default world: two clusters, each a gateway and a worker, echo + client. */
/** sidecar.istio.io/inject (the world file module stays free of the resources module) */
const MESH_INJECT = `sidecar.${process.env['STRAIT_GROUP_MESH'] ?? 'istio.io'}/inject`;

export const DEFAULT_WORLD = {
  clusters: ['a', 'b'].map((x, i) => ({
    name: `cluster-${x}`,
    clusterCIDR: `10.${i + 1}.0.0/16`,
    serviceCIDR: `100.${i + 1}.0.0/16`,
    nodes: [
      { name: 'gateway', role: 'gateway' },
      { name: 'worker', role: 'worker' },
    ],
    workloads: [
      {
        namespace: 'default',
        deployments: [{ name: 'echo', image: 'strait/echo', replicas: 1, port: 8080 }],
        services: [{ name: 'echo', ports: [{ name: 'http', port: 8080 }] }],
        pods: [{ name: 'client', image: 'strait/idle', node: 'worker' }],
      },
      // the mesh member namespace of cluster-a (docs/mesh.md, In the local world)
      ...(x === 'a'
        ? [
            {
              namespace: 'mesh',
              deployments: [{ name: 'echo', image: 'strait/echo', replicas: 1, port: 8080, annotations: { [MESH_INJECT]: 'true' } }],
              services: [{ name: 'echo', ports: [{ name: 'http', port: 8080 }] }],
              pods: [
                { name: 'client', image: 'strait/idle', node: 'worker', annotations: { [MESH_INJECT]: 'true' } },
                { name: 'outsider', image: 'strait/idle', node: 'worker' },
              ],
            },
          ]
        : []),
    ],
  })),
};

function wrap<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (isStraitError(err, 'STRAIT_ERR_CONFIG_INVALID')) {
      const at = err.detail['path'];
      throw E.worldInvalid(typeof at === 'string' && at ? at : path, err.detail['value'], String(err.detail['rule'] ?? err.message));
    }
    throw err;
  }
}

/** Validate a world (parsed YAML/JSON); throws STRAIT_ERR_WORLD_INVALID / STRAIT_ERR_CONFIG_UNKNOWN_KEY. */
export function parseWorld(input: unknown, where = 'world'): Readonly<WorldFile> {
  const world = wrap(where, () => definition.parse(input, where === 'world' ? undefined : where));
  checkWorld(world);
  return world;
}

function checkWorld(w: WorldFile): void {
  const seen = new Set<string>();
  const nets: { path: string; text: string; cidr: Cidr }[] = [];
  const internet = wrap('world.internetCIDR', () => parseCidr(w.internetCIDR, 'world.internetCIDR'));
  nets.push({ path: 'world.internetCIDR', text: w.internetCIDR, cidr: internet });
  w.clusters.forEach((c, i) => {
    const at = `world.clusters[${i}]`;
    if (seen.has(c.name)) throw E.worldInvalid(`${at}.name`, c.name, 'is used by two clusters; cluster names must be unique');
    seen.add(c.name);
    const fields: [string, string][] = [
      ['clusterCIDR', c.clusterCIDR],
      ['serviceCIDR', c.serviceCIDR],
      ['nodeCIDR', nodeCidrOf(c, i)],
    ];
    for (const [field, text] of fields) {
      const cidr = wrap(`${at}.${field}`, () => parseCidr(text, `${at}.${field}`));
      if (cidr.prefix > 28) throw E.worldInvalid(`${at}.${field}`, text, 'is too small; use a /28 or larger');
      for (const other of nets) {
        if (cidrsOverlap(cidr, other.cidr)) {
          throw E.worldInvalid(`${at}.${field}`, text, `overlaps ${other.path} ${JSON.stringify(other.text)}; CIDRs must not overlap between clusters`);
        }
      }
      nets.push({ path: `${at}.${field}`, text, cidr });
    }
    const clusterCidr = parseCidr(c.clusterCIDR);
    if (c.nodeCIDRMaskSize < clusterCidr.prefix || 2 ** (c.nodeCIDRMaskSize - clusterCidr.prefix) < c.nodes.length) {
      throw E.worldInvalid(`${at}.nodeCIDRMaskSize`, c.nodeCIDRMaskSize, `does not give each of the ${c.nodes.length} nodes a slice of ${c.clusterCIDR}`);
    }
    const gateways = c.nodes.filter((n) => n.role === 'gateway').length;
    if (gateways < 1 || gateways > 2)
      throw E.worldInvalid(`${at}.nodes`, `${gateways} gateway nodes`, 'must have exactly one or two nodes with role "gateway"');
    if (!c.nodes.some((n) => n.role === 'worker'))
      throw E.worldInvalid(
        `${at}.nodes`,
        c.nodes.map((n) => n.name),
        'must have at least one node with role "worker"',
      );
    const nodeNames = new Set<string>();
    c.nodes.forEach((n, j) => {
      if (nodeNames.has(n.name)) throw E.worldInvalid(`${at}.nodes[${j}].name`, n.name, 'is used twice in this cluster');
      nodeNames.add(n.name);
    });
    const namespaces = new Set<string>();
    c.workloads.forEach((ns, j) => {
      const nat = `${at}.workloads[${j}]`;
      if (namespaces.has(ns.namespace)) throw E.worldInvalid(`${nat}.namespace`, ns.namespace, 'is listed twice; merge the two entries');
      namespaces.add(ns.namespace);
      const podNames = new Set<string>();
      ns.pods.forEach((p, k) => {
        if (podNames.has(p.name)) throw E.worldInvalid(`${nat}.pods[${k}].name`, p.name, 'is used twice in this namespace');
        podNames.add(p.name);
        if (p.node !== undefined && p.node !== null && !nodeNames.has(p.node))
          throw E.worldInvalid(`${nat}.pods[${k}].node`, p.node, `is not a node of ${c.name}`);
      });
      ns.deployments.forEach((d, k) => {
        if (d.node !== undefined && d.node !== null && !nodeNames.has(d.node))
          throw E.worldInvalid(`${nat}.deployments[${k}].node`, d.node, `is not a node of ${c.name}`);
      });
      const svcNames = new Set<string>();
      ns.services.forEach((s, k) => {
        if (svcNames.has(s.name)) throw E.worldInvalid(`${nat}.services[${k}].name`, s.name, 'is used twice in this namespace');
        svcNames.add(s.name);
      });
    });
  });
}

export function nodeCidrOf(c: Pick<WorldCluster, 'nodeCIDR'>, index: number): string {
  return c.nodeCIDR ?? `172.18.${index}.0/24`;
}
