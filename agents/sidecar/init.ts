// The injected init container of a pod with a sidecar (Kubernetes mode; the webhook adds it):
// installs the pod's nftables redirect (inbound TCP to the proxy's inbound port, outbound
// TCP to its outbound port, except the proxy's own uid, loopback, the proxy's admin and
// metrics ports), as istio-init does, then exits. Runs as root with NET_ADMIN and NET_RAW only.
//   node dist/agents/sidecar/init.js [--inbound-port 15006] [--outbound-port 15001] [--proxy-uid 1337]
//     [--exclude-inbound-ports 15020,...] [--dry-run]
// Assembled in src/mesh/control/proxy-run/sidecar-init.ts.
import { printedInfo, runEntry } from '../../daemon/entry.js';
import { runSidecarInit, SIDECAR_INIT_HELP } from '../../src/mesh/control/proxy-run/index.js';

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-sidecar-init', SIDECAR_INIT_HELP)) return;
  await runSidecarInit();
}

runEntry(main);
