// Entry of the world's pod runtime (src/world/workloads/pod-runtime.ts): one process serving
// the built-in workload (strait/echo) of every pod of the world, started by the supervisor.
//   node dist/daemon/pod-runtime.js
import { runPodRuntime } from '../src/world/workloads/index.js';

runPodRuntime();
