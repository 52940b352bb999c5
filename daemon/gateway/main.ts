// strait gateway daemon entry: node dist/daemon/gateway/main.js --config gateway.yaml
import { printedInfo, runEntry, stopOnSignals } from '../entry.js';
import { configPathFromArgv, readConfigFile } from '../config-file.js';
import { startGatewayProcess } from '../../src/multicluster/control/gateway/index.js';

const HELP = `usage: strait-gateway --config FILE (YAML or JSON; docs/gateway-and-agent.md)

The gateway daemon: PSK tunnels to remote gateways (UDP 4500), the VXLAN endpoint of the
cluster's node agents (UDP 4800), /metrics and /records. SIGHUP re-reads peer endpoints
and the PSK; a rewritten pskFile (a re-join, a Kubernetes Secret update) is picked up by
itself: the gateway re-handshakes under the new PSK, established sessions carry traffic until
then. SIGTERM stops (and releases the HA lease). The bulk traffic (tunnel receive, open,
deliver; TUN read, seal, send) runs on a native thread; STRAIT_GATEWAY_NATIVE=0 keeps it in JS.

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
  const p = await startGatewayProcess(readConfigFile(path));
  const d = p.daemon;
  console.log(
    JSON.stringify({
      msg: 'gateway started',
      cluster: d.gateway.config.clusterId,
      tunnelPort: d.gateway.tunnelPort,
      vxlanPort: d.gateway.vxlanPort,
      metricsPort: d.metricsPort,
    }),
  );
  // SIGHUP: re-read the file; a new active gateway (HA) takes effect at once
  stopOnSignals(
    () => p.stop(),
    () => p.reload(() => readConfigFile(path), path),
  );
}

runEntry(main);
