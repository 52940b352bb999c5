// world.json in the state dir: what the `strait up` process that owns a world writes
// (src/cli/world-file.ts) and every reader takes it as: status, exec, down, the store
// clients, the multicluster commands and the world-address check. One record type, one
// reader.
import { existsSync } from 'node:fs';
import { readInput } from './read-input.js';
import { stateFiles } from './state-dir.js';

/** One process of the world's process table. */
export interface ComponentStatus {
  name: string;
  netns?: string;
  pid?: number;
  restarts: number;
  ready: boolean;
  metrics?: string;
  log: string;
}

/** The world as its supervisor reports it (src/world/supervisor). */
export interface WorldState {
  status: 'ready' | 'starting';
  bootMs?: number;
  userNamespace: boolean;
  internet: { cidr: string; bridge: string; rootIP: string };
  metrics: string;
  store: { socket: string; token: string; available: boolean; reason?: string };
  logs: string;
  /** the code-hosting server as the host reaches it (http://127.0.0.1:PORT), when `strait up` bound a port for it */
  githost?: string;
  /** the control module's API (GitOps: strait login, gpg, app) as the host reaches it, when `strait up` bound a port for it */
  control?: string;
  /** the web console (served by the control module on its API port) as the host reaches it */
  console?: string;
  /** the same servers as pods, nodes and the world's own processes reach them */
  inWorld: { githost?: string; control?: string; console?: string };
  clusters: {
    name: string;
    clusterCIDR: string;
    serviceCIDR: string;
    nodeCIDR: string;
    dnsIP: string;
    dnsServer: string;
    nodes: { name: string; role: string; netns: string; underlayIP: string; podCIDR: string; publicIP?: string }[];
    pods: { namespace: string; name: string; node: string; netns: string; ip: string; image: string }[];
    services: { namespace: string; name: string; clusterIP?: string; ports: { port: number; protocol: string }[] }[];
    /** the cluster's mesh ingress gateway as the host reaches it (http://127.0.0.1:PORT), when `strait up` bound a port for it */
    ingress?: string;
  }[];
  components: ComponentStatus[];
}

export interface WorldRecord extends WorldState {
  version: 1;
  /** pid of the `strait up` process that owns the world (kill it and the world is gone) */
  pid: number;
  /** host pid of the world supervisor (pid 1 of the private tree): nsenter -t */
  supervisorPid: number;
  stateDir: string;
  startedAt: string;
}

/** The state dir's world.json; undefined when there is none or it is not JSON. */
export function readWorldRecord(stateDir: string): WorldRecord | undefined {
  const file = stateFiles(stateDir).world;
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readInput(file)) as WorldRecord;
  } catch {
    return undefined;
  }
}
