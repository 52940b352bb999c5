// What every strait command shares: output formats, the state dir, the program-wide
// options, opening a cluster's store, the version.
export * from './output.js';
export * from './state-dir.js';
export * from './global-options.js';
export * from './kube-options.js';
export * from './store-options.js';
export * from './version.js';
export * from './process-alive.js';
export * from './jsonpath-template.js';
export * from './world-address.js';
export * from './world-record.js';
export * from './read-input.js';
export * from './manifests.js';
export * from './terminal-safe.js';
