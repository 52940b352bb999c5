// The mesh's processes in the local world, for components.ts:
//   out.push(...meshComponents(plan, ctx, here));
// - per cluster, the mesh agent in the world's root namespace (certificates, sidecars of
//   injected pods, configurations), bootstrapping the default SMCP and member roll in the
//   first cluster;
// - per cluster, the ingress gateway in its gateway node's namespace, on 0.0.0.0:15080 and
//   on the unix socket <state>/mesh/<cluster>/ingress.sock (the host's way in), routing `/`
//   to the cluster's `echo` service: `echo.mesh` where the cluster has the mesh namespace
//   (mTLS into the mesh), else `echo.default` (plaintext: no sidecar there).
// Types are structural so that this file does not depend on the world's internals.
import { join } from 'node:path';

export interface MeshPlanView {
  internet: { rootIP: string };
  /** how the injected pods' proxies run (the agent's STRAIT_MESH_DATAPLANE; default sidecar) */
  meshDataplane?: 'sidecar' | 'node';
  clusters: {
    name: string;
    nodes: { name: string; role: string; netns: string; underlayIP: string }[];
    services?: { namespace: string; name: string; ports: { port: number }[] }[];
  }[];
}

export interface MeshComponentContext {
  stateDir: string;
  metricsPort: number;
}

export interface MeshComponent {
  name: string;
  netns?: string;
  command: string[];
  env?: Record<string, string>;
  ready?: 'ipc' | 'started';
  metrics?: string;
}

export const INGRESS_PORT = 15080;
export const INGRESS_METRICS_PORT = 15090;

/** Where the host reaches a cluster's ingress gateway. */
export function ingressSocket(stateDir: string, cluster: string): string {
  return join(stateDir, 'mesh', cluster, 'ingress.sock');
}

export interface IngressRoute {
  pathPrefix: string;
  namespace: string;
  service: string;
  port: number;
}

/** What a cluster's ingress gateway routes `/` to: echo.mesh, else echo.default, else nothing. */
export function defaultIngressRoutes(c: MeshPlanView['clusters'][number]): IngressRoute[] {
  for (const namespace of ['mesh', 'default']) {
    const svc = c.services?.find((s) => s.namespace === namespace && s.name === 'echo');
    if (svc) return [{ pathPrefix: '/', namespace, service: 'echo', port: svc.ports[0]?.port ?? 8080 }];
  }
  return c.services ? [] : [{ pathPrefix: '/', namespace: 'mesh', service: 'echo', port: 8080 }];
}

export function meshComponents(
  plan: MeshPlanView,
  ctx: MeshComponentContext,
  here: (rel: string) => string,
  opts: { members?: string[]; routes?: IngressRoute[] } = {},
): MeshComponent[] {
  const members = opts.members ?? ['mesh'];
  const out: MeshComponent[] = [];
  plan.clusters.forEach((c, i) => {
    const routes = opts.routes ?? defaultIngressRoutes(c);
    // the agent's own metrics: world root, one port per cluster after the githost's
    const agentMetrics = `${plan.internet.rootIP}:${ctx.metricsPort + 10 + i}`;
    out.push({
      name: `${c.name}.mesh-agent`,
      ready: 'ipc',
      metrics: agentMetrics,
      command: [process.execPath, here('agents/mesh/main.js')],
      env: {
        STRAIT_CLUSTER: c.name,
        STRAIT_MESH_METRICS: `0.0.0.0:${ctx.metricsPort + 10 + i}`,
        STRAIT_MESH_INGRESS: JSON.stringify(routes),
        ...(plan.meshDataplane ? { STRAIT_MESH_DATAPLANE: plan.meshDataplane } : {}),
        ...(i === 0 ? { STRAIT_MESH_BOOTSTRAP: members.join(',') } : {}),
      },
    });
    const gw = c.nodes.find((n) => n.role === 'gateway');
    if (!gw) return;
    out.push({
      name: `${c.name}.${gw.name}.mesh-ingress`,
      netns: gw.netns,
      ready: 'ipc',
      command: [
        process.execPath,
        here('daemon/mesh-ingress/main.js'),
        '--config',
        join(ctx.stateDir, 'mesh', c.name, 'ingress.json'),
        '--listen',
        `0.0.0.0:${INGRESS_PORT}`,
        '--listen-unix',
        ingressSocket(ctx.stateDir, c.name),
        '--metrics',
        `0.0.0.0:${INGRESS_METRICS_PORT}`,
      ],
      metrics: `${gw.underlayIP}:${INGRESS_METRICS_PORT}`,
    });
  });
  return out;
}
