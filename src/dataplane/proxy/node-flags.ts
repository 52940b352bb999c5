// Node/V8 flags the sidecar process runs with (the mesh agent, the injector and the bench
// spawn `node ...SIDECAR_NODE_FLAGS dist/agents/sidecar/main.js`).
export const SIDECAR_NODE_FLAGS: readonly string[] = [];
