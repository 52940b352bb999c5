// The mesh's proxy processes, assembled: the sidecar (sidecar.ts, its init: sidecar-init.ts),
// the node-level proxy (node-proxy.ts) and the ingress gateway (ingress.ts).
// Loaded by the proxy entries only: nothing here loads the store, openpgp or @kubernetes/client-node.
export { runSidecar } from './sidecar.js';
export { parseSidecarArgs, SIDECAR_HELP, type SidecarSettings } from './sidecar-args.js';
export { runSidecarInit, SIDECAR_INIT_HELP } from './sidecar-init.js';
export { runNodeProxy, NODE_PROXY_HELP } from './node-proxy.js';
export { runMeshIngress, MESH_INGRESS_HELP } from './ingress.js';
