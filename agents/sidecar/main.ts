// The sidecar proxy process: one per injected pod, inside the pod's network namespace.
//   node dist/agents/sidecar/main.js --config FILE [--inbound-port 15006] [--outbound-port 15001]
//     [--admin 127.0.0.1:15000 | --admin-socket PATH] [--bind 0.0.0.0]
//     [--app HOST:PORT] [--outbound-destination HOST:PORT] [--uid 1337] [--config-ipc] [--metrics HOST:PORT]
//     [--flow-limit 256] [--flow-report-ms 2000]
//     [--control URL [--control-token FILE] [--control-ca FILE]]
// Kubernetes mode (the injected strait-proxy container): --control names the control module's
// mesh configuration service; the proxy binds nothing until the first configuration came from
// it, then follows it (long poll) with the pod's projected token (docs/kubernetes.md).
// Without --app / --outbound-destination the proxy serves connections redirected by the
// pod's nftables rules (sidecarRedirectRules) and reads SO_ORIGINAL_DST.
// Configuration: the JSON file given with --config (re-read when it changes; with
// --config-ipc read once, then pushed as {type:'config', config} over the IPC channel by the
// mesh agent) and PUT /config on the admin listener; GET /config, GET /metrics, GET /ready, GET /flows.
// Inbound flows seen (docs/mesh.md, Observed traffic): with --config-ipc, what changed is sent to
// the mesh agent as {type:'flows', report} at most every --flow-report-ms, and only when it changed;
// with --control, POSTed to the control module's /v1/flows (kept and sent again after a failure).
// On start it prints one JSON line to stdout: {"ready":true,"inbound":P,"outbound":P,"admin":...}.
import { printedInfo, runEntry } from '../../daemon/entry.js';
import { parseSidecarArgs, runSidecar, SIDECAR_HELP } from '../../src/mesh/control/proxy-run/index.js';

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-sidecar', SIDECAR_HELP)) return;
  await runSidecar(parseSidecarArgs(process.argv));
}

runEntry(main);
