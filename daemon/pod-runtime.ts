// Entry of the world's pod runtime (src/world/workloads/pod-runtime.ts): one process serving
// the built-in workload (strait/echo) of every pod of the world, started by the supervisor.
//   node dist/daemon/pod-runtime.js
import { runPodRuntime } from '../src/world/workloads/index.js';
import { printedInfo, runEntry } from './entry.js';

const HELP = `usage: pod-runtime.js

The local world's pod runtime: the built-in workload (strait/echo) of every pod, in each pod's
network namespace, told which pods to run by the supervisor that starts it (docs/world.md);
it is not run by hand.

  -h, --help     this help
  -V, --version  the version
`;

runEntry(async () => {
  if (await printedInfo(process.argv, 'pod-runtime', HELP)) return;
  runPodRuntime();
});
