// strait gateway daemon entry: node dist/daemon/gateway/main.js --config gateway.yaml
import { existsSync } from 'node:fs';
import { watchFile, type FileWatch } from '../../src/platform/fs/index.js';
import { printedInfo, runEntry } from '../entry.js';
import { configPathFromArgv, readConfigFile } from '../config-file.js';
import { parseGatewayConfig } from '../../src/multicluster/dataplane/gateway/index.js';
import { runGatewayDaemon } from './index.js';

const HELP = `usage: strait-gateway --config FILE (YAML or JSON; docs/gateway-and-agent.md)

The gateway daemon: PSK tunnels to remote gateways (UDP 4500), the VXLAN endpoint of the
cluster's node agents (UDP 4800), /metrics and /records. SIGHUP re-reads peer endpoints
and the PSK; a rewritten pskFile (a re-join, a Kubernetes Secret update) is picked up by
itself: the gateway re-handshakes under the new PSK, established sessions carry traffic until
then. SIGTERM stops (and releases the HA lease).

HA (an \`ha\` section): active/passive through a coordination.k8s.io/v1 Lease.
  world mode       ha.store (the world's store socket); ha.leaseDurationMs / ha.renewMs
                   (defaults 1000 / 200 ms; \`strait up\` uses 700 / 150 ms)
  Kubernetes mode  STRAIT_STORE=kubernetes (in-cluster or $KUBECONFIG) or ha.kubernetes.kubeconfig:
                   Lease strait-gateway in $STRAIT_POD_NAMESPACE (default submariner-operator),
                   holder $STRAIT_NODE_NAME (also the gateway's name when the file sets none),
                   $STRAIT_NODE_IP: the VXLAN socket's address when the file sets no vxlan.listen,
                   lease 15 s / renew deadline 10 s / retry 2 s (ha.kubernetes.*Seconds);
                   the gateway publishes its Endpoint and Gateway records in Submariner's shape
                   in submariner-operator ($STRAIT_OPERATOR_NAMESPACE), and its Endpoint on the
                   broker of the cluster's join.

  --config FILE   the daemon's configuration
  -h, --help      this help
  -V, --version   the version
`;

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-gateway', HELP)) return;
  const path = configPathFromArgv(process.argv, 'strait-gateway');
  const cfg = readConfigFile(path);
  // Kubernetes (deploy/gateway.yaml): the node name from the downward API names this gateway
  const nodeName = process.env['STRAIT_NODE_NAME'];
  if (nodeName && cfg && typeof cfg === 'object' && (cfg as { name?: unknown }).name === undefined) (cfg as { name?: string }).name = nodeName;
  // ... and its InternalIP (status.hostIP) is the VXLAN socket's address when the file sets none:
  // node agents take frames only from the gateway address they send to, and a node with
  // several addresses would otherwise answer a worker from the address of the interface
  // towards it (real clusters: the agent's drops{reason="auth"}, no packet delivered)
  const nodeIp = process.env['STRAIT_NODE_IP'];
  if (nodeIp && cfg && typeof cfg === 'object') {
    const c = cfg as { vxlan?: Record<string, unknown> };
    if (c.vxlan === undefined || (typeof c.vxlan === 'object' && c.vxlan !== null && c.vxlan['listen'] === undefined)) c.vxlan = { ...(c.vxlan ?? {}), listen: nodeIp };
    // ... and the tunnel's private IP in the Endpoint record (Submariner's private_ip), where
    // the file sets none: the tunnel listens on every address, which is no address to publish
    const t = cfg as { tunnel?: Record<string, unknown> };
    if (t.tunnel === undefined || (typeof t.tunnel === 'object' && t.tunnel !== null && t.tunnel['privateIP'] === undefined)) t.tunnel = { ...(t.tunnel ?? {}), privateIP: nodeIp };
  }
  // the PSK comes from the cluster's join (broker-info): wait until it has been written
  const pskFile = (cfg as { pskFile?: unknown }).pskFile;
  for (let i = 0; typeof pskFile === 'string' && !existsSync(pskFile); i++) {
    if (i === 0) console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', level: 'info', msg: `waiting for the tunnel PSK in ${pskFile} (written when the cluster joins the broker)` }));
    await new Promise((r) => setTimeout(r, 50));
  }
  const d = await runGatewayDaemon(cfg, {
    onEvent: (ev) => console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', ...ev })),
  });
  console.log(JSON.stringify({ msg: 'gateway started', cluster: d.gateway.config.clusterId, tunnelPort: d.gateway.tunnelPort, vxlanPort: d.gateway.vxlanPort, metricsPort: d.metricsPort }));
  const log = (level: string, msg: string): void => console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', level, msg }));
  const reloadPsk = (why: string): void => {
    try {
      if (d.gateway.reloadPsk()) log('info', `tunnel PSK changed (${why}): handshaking again with every peer`);
    } catch (err) {
      log('error', `re-reading the tunnel PSK failed (${why}), keeping the running one: ${String(err)}`);
    }
  };
  // the file's directory, not the file: a Secret volume swaps a symlink, strait join renames
  let pskWatch: FileWatch | undefined;
  if (typeof pskFile === 'string') {
    try {
      pskWatch = watchFile(pskFile, () => { if (existsSync(pskFile)) reloadPsk(`${pskFile} changed`); }, 100);
    } catch (err) {
      log('warn', `cannot watch ${pskFile} for a new PSK (SIGHUP still re-reads it): ${String(err)}`);
    }
  }
  const stop = (): void => {
    pskWatch?.close();
    d.stop().then(() => process.exit(0), () => process.exit(1));
  };
  // SIGHUP: re-read the file; moved peer endpoints (HA) take effect at once
  process.on('SIGHUP', () => {
    try {
      const next = parseGatewayConfig(readConfigFile(path), path);
      for (const p of next.peers) {
        const cur = d.gateway.tunnel.peer(p.clusterId);
        if (cur && (cur.configuredAddress !== p.endpoint || cur.configuredPort !== p.port)) d.gateway.setPeerEndpoint(p.clusterId, p.endpoint, p.port);
      }
      console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', level: 'info', msg: `reloaded ${path}` }));
      if (typeof pskFile === 'string') reloadPsk('SIGHUP');
    } catch (err) {
      console.error(JSON.stringify({ time: new Date().toISOString(), component: 'gateway', level: 'error', msg: `reload of ${path} failed, keeping the running configuration: ${String(err)}` }));
    }
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

runEntry(main);
