// Mesh control plane: the CA (workload identities) and policy resolution (what each
// sidecar enforces), as pure functions over resources.
export * from './ca/index.js';
export * from './policy/index.js';
export * from './controller/index.js';
export * from './agent/index.js';
export * from './observe/index.js';
export * from './config-server/index.js';
