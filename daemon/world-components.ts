// The processes the world runs besides its workloads. Add an entry here for each
// daemon that belongs in the local world; the world's process table starts it in the
// given network namespace once the network, service proxies, DNS and the store API
// are up, restarts it with backoff, and writes its output to <state>/logs/<name>.log.
//
// Every component gets in its environment: STRAIT_STATE_DIR, STRAIT_STORE_SOCKET,
// STRAIT_STORE_TOKEN_FILE (connectStoreFromFiles), STRAIT_METRICS_PORT, plus its own
// `env`. A Node component should send `process.send({ type: 'ready' })` when it serves
// and set `ready: 'ipc'`; others use `ready: 'started'`.
//
// Example (gateway daemon on each gateway node):
//   for (const c of plan.clusters) for (const n of c.nodes.filter((x) => x.role === 'gateway')) out.push({
//     name: `${c.name}.${n.name}.gateway`, netns: n.netns, ready: 'ipc',
//     command: [process.execPath, here('./gateway.js')],
//     env: { STRAIT_CLUSTER: c.name, STRAIT_NODE: n.name, STRAIT_PUBLIC_IP: n.publicIP ?? '' },
//     metrics: `${n.underlayIP}:${ctx.metricsPort}`,
//   });
import { fileURLToPath } from 'node:url';
import type { Component, ComponentContext, WorldPlan } from '../src/control/world/index.js';

/** absolute path of a compiled entry next to this file (dist/daemon/...) */
export const here = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));

export function worldComponents(plan: WorldPlan, ctx: ComponentContext): Component[] {
  const out: Component[] = [];
  void plan;
  void ctx;
  return out;
}
