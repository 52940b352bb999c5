// Codes owned by world: the local world simulator.
import { def, q } from '../define.js';

export const world = {
  worldInvalid: def('STRAIT_ERR_WORLD_INVALID', 'usage', (path: string, value: unknown, rule: string) => ({
    message: `invalid world at ${path}: ${q(value)} ${rule}`,
    detail: { path, value, rule },
  })),
  worldParse: def('STRAIT_ERR_WORLD_PARSE', 'usage', (path: string, reason: string) => ({
    message: `world file ${q(path)} is not valid YAML/JSON: ${reason}`,
    detail: { path, reason },
  })),
  worldNotRunning: def('STRAIT_ERR_WORLD_NOT_RUNNING', 'unavailable', (stateDir: string) => ({
    message: `no world is running with state dir ${q(stateDir)}; start one with 'strait up'`,
    detail: { stateDir },
  })),
  worldRunning: def('STRAIT_ERR_WORLD_RUNNING', 'conflict', (stateDir: string, pid: number, stop = 'strait down') => ({
    message: `a world is already running (or starting) with state dir ${q(stateDir)} (pid ${pid > 0 ? pid : 'not recorded yet'} holds its lock, world.lock); stop it with '${stop}' or pick another --state-dir`,
    detail: { stateDir, pid },
  })),
  worldAddress: def('STRAIT_ERR_WORLD_ADDRESS', 'usage', (address: string, hostURL: string | undefined) => ({
    message:
      `${q(address)} is an address inside the local world, which this host does not reach (the request would leave through the host's default route); ` +
      (hostURL ? `from the host use ${hostURL}` : "from the host use the address 'strait status' lists for it (127.0.0.1:PORT)"),
    detail: { address, ...(hostURL ? { hostURL } : {}) },
  })),
  podNotFound: def('STRAIT_ERR_POD_NOT_FOUND', 'notFound', (ref: string) => ({
    message: `pod ${q(ref)} not found; use CLUSTER/NAMESPACE/POD as 'strait get pods -A' shows`,
    detail: { ref },
  })),
  clusterUnknown: def('STRAIT_ERR_CLUSTER_UNKNOWN', 'notFound', (cluster: string, known: string[]) => ({
    message: `unknown cluster ${q(cluster)}; known clusters: ${known.join(', ') || '(none)'}`,
    detail: { cluster, known },
  })),
};
