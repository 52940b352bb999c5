// The gateway daemon process (`strait-gateway --config FILE`): the configuration completed
// from the environment Kubernetes gives (deploy/gateway.yaml), the join's PSK waited for and
// followed (a rewritten pskFile: a re-join, a Kubernetes Secret update), the gateway with
// /metrics and /records (run.ts), and `reload` for SIGHUP (moved peer endpoints, the PSK).
import { existsSync } from 'node:fs';
import { watchFile, type FileWatch } from '../../../platform/fs/index.js';
import { parseGatewayConfig } from '../../dataplane/gateway/index.js';
import { Handover } from '../../dataplane/handover/index.js';
import { runGatewayDaemon, type GatewayDaemon } from './run.js';

const line = (level: string, msg: string, extra: Record<string, unknown> = {}): void =>
  console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', level, msg, ...extra }));

/**
 * Kubernetes (deploy/gateway.yaml): the node name from the downward API names this gateway,
 * and its InternalIP (status.hostIP) is the VXLAN socket's address when the file sets none:
 * node agents take frames only from the gateway address they send to, and a node with
 * several addresses would otherwise answer a worker from the address of the interface
 * towards it (real clusters: the agent's drops{reason="auth"}, no packet delivered).
 */
function fromEnvironment(cfg: unknown, env: NodeJS.ProcessEnv): void {
  if (!cfg || typeof cfg !== 'object') return;
  const nodeName = env['STRAIT_NODE_NAME'];
  if (nodeName && (cfg as { name?: unknown }).name === undefined) (cfg as { name?: string }).name = nodeName;
  const nodeIp = env['STRAIT_NODE_IP'];
  const c = cfg as { vxlan?: Record<string, unknown> };
  if (nodeIp && (c.vxlan === undefined || (typeof c.vxlan === 'object' && c.vxlan !== null && c.vxlan['listen'] === undefined)))
    c.vxlan = { ...(c.vxlan ?? {}), listen: nodeIp };
  // ... and the tunnel's private IP in the Endpoint record (Submariner's private_ip), where
  // the file sets none: the tunnel listens on every address, which is no address to publish
  const t = cfg as { tunnel?: Record<string, unknown> };
  if (nodeIp && (t.tunnel === undefined || (typeof t.tunnel === 'object' && t.tunnel !== null && t.tunnel['privateIP'] === undefined)))
    t.tunnel = { ...(t.tunnel ?? {}), privateIP: nodeIp };
}

/** The PSK comes from the cluster's join (broker-info): wait until it has been written. */
async function waitForPsk(pskFile: string): Promise<void> {
  for (let i = 0; !existsSync(pskFile); i++) {
    if (i === 0) line('info', `waiting for the tunnel PSK in ${pskFile} (written when the cluster joins the broker)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface GatewayProcess {
  daemon: GatewayDaemon;
  /** SIGHUP: the configuration file read again; moved peer endpoints take effect at once, the PSK is re-read */
  reload(read: () => unknown, path: string): void;
  stop(): Promise<void>;
}

export async function startGatewayProcess(cfg: unknown, env: NodeJS.ProcessEnv = process.env): Promise<GatewayProcess> {
  fromEnvironment(cfg, env);
  // a rolling update starts this gateway beside the one it replaces: $STRAIT_HANDOVER_WAIT_S
  // (announced on the node while it waits: an active HA gateway leaves its Lease to it)
  const handover = Handover.fromEnv('gateway', env, (msg) => line('info', msg), { announceSuccessor: true });
  // loaded: ready to take over (before the PSK, which a cluster not yet joined waits for)
  handover.sayReady();
  const pskFile = (cfg as { pskFile?: unknown }).pskFile;
  if (typeof pskFile === 'string') await waitForPsk(pskFile);
  const d = await runGatewayDaemon(cfg, {
    handover,
    onEvent: (ev) => console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', ...ev })),
  });
  handover.done();
  if (handover.tookOverMessage) line('info', handover.tookOverMessage);
  const reloadPsk = (why: string): void => {
    try {
      if (d.gateway.reloadPsk()) line('info', `tunnel PSK changed (${why}): handshaking again with every peer`);
    } catch (err) {
      line('error', `re-reading the tunnel PSK failed (${why}), keeping the running one: ${String(err)}`);
    }
  };
  // the file's directory, not the file: a Secret volume swaps a symlink, strait join renames
  let pskWatch: FileWatch | undefined;
  if (typeof pskFile === 'string') {
    try {
      pskWatch = watchFile(
        pskFile,
        () => {
          if (existsSync(pskFile)) reloadPsk(`${pskFile} changed`);
        },
        100,
      );
    } catch (err) {
      line('warn', `cannot watch ${pskFile} for a new PSK (SIGHUP still re-reads it): ${String(err)}`);
    }
  }
  return {
    daemon: d,
    reload(read, path) {
      try {
        const next = parseGatewayConfig(read(), path);
        for (const p of next.peers) {
          const cur = d.gateway.tunnel.peer(p.clusterId);
          if (cur && (cur.configuredAddress !== p.endpoint || cur.configuredPort !== p.port)) d.gateway.setPeerEndpoint(p.clusterId, p.endpoint, p.port);
        }
        line('info', `reloaded ${path}`);
        if (typeof pskFile === 'string') reloadPsk('SIGHUP');
      } catch (err) {
        line('error', `reload of ${path} failed, keeping the running configuration: ${String(err)}`);
      }
    },
    async stop() {
      pskWatch?.close();
      await d.stop();
    },
  };
}
