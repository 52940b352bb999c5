// Node/V8 flags the sidecar process runs with: the mesh agent, the injector's container
// command and the bench all start `node ...SIDECAR_NODE_FLAGS dist/agents/sidecar/main.js`.
//
// A young generation of 4 MiB semi-spaces, fixed. V8 begins with 1 MiB and grows it only when
// much survives, which a proxy's short-lived chunks rarely do: a sidecar allocates about 1-2 KiB
// of JS heap per proxied request, so with 1 MiB it scavenged every ~500 requests; each scavenge
// is a pause of 0.3-1 ms on a quiet machine and, when the machine is overloaded, tens of
// milliseconds (its helper threads wait for a CPU). With 4 MiB it is about one every 2,000
// requests. Fixed, because a minimum alone (8 MiB before) let V8 grow it to 16 MiB under bulk
// traffic and keep those pages: `node dist/bench/mesh.js`, the same run, three rounds: a pair's
// RSS 185 -> 153 MiB with 4 MiB fixed, CPU per request 0.82x, p99 at 1,000 req/s 0.94 -> 0.71 ms;
// 2 MiB fixed took 145 MiB but 1.06x the CPU per request (docs/mesh.md).
export const SIDECAR_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=4', '--max-semi-space-size=4'];
