// The one process supervisor: spawn, log file, IPC, readiness, restart with the one retry
// policy (src/base/backoff), stop by PID. Used by the world's process table and the mesh
// agent's sidecar and node-proxy supervisors.
export { PROCESS_BACKOFF, SupervisedProcess, type ExitInfo, type Readiness, type SupervisedOptions } from './supervised.js';
