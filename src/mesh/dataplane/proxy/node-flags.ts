// Node/V8 flags the sidecar process runs with: the mesh agent, the injector's container
// command and the bench all start `node ...SIDECAR_NODE_FLAGS dist/agents/sidecar/main.js`.
//
// A young generation of 8 MiB from the start (V8 begins with 1 MiB and grows it only when
// much survives, which a proxy's short-lived chunks never do). A sidecar allocates about
// 1-2 KiB of JS heap per proxied request, so with 1 MiB it scavenged every ~500 requests;
// each scavenge is a pause of 0.3-1 ms on a quiet machine and, when the machine is
// overloaded, tens of milliseconds (its helper threads wait for a CPU). With 8 MiB it is
// about one every 4,000-5,000 requests, for ~8-9 MiB more resident memory.
export const SIDECAR_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=8'];
