// The mesh's proxy processes, assembled: the sidecar (sidecar.ts). Loaded by the proxy
// entries only: nothing here loads the store, openpgp or @kubernetes/client-node.
export { runSidecar } from './sidecar.js';
export { parseSidecarArgs, SIDECAR_HELP, type SidecarSettings } from './sidecar-args.js';
