// Entry of the strait/echo image: one process per pod, started by the world's process
// table inside the pod's network namespace. Identity from the environment:
//   STRAIT_CLUSTER, STRAIT_NAMESPACE, STRAIT_POD, STRAIT_NODE, STRAIT_PORT (8080),
//   STRAIT_METRICS_PORT (9464)
import { createLogger } from '../src/base/log/index.js';
import { Lifecycle } from '../src/base/lifecycle/index.js';
import { createRegistry, serveMetrics, Counter } from '../src/control/metrics/index.js';
import { startEcho } from '../src/control/workloads/index.js';

const env = (k: string, d: string): string => process.env[k] ?? d;
const id = { cluster: env('STRAIT_CLUSTER', ''), namespace: env('STRAIT_NAMESPACE', ''), pod: env('STRAIT_POD', ''), node: env('STRAIT_NODE', '') };
const log = createLogger('echo', id);
const life = new Lifecycle();
life.handleSignals(log);

const echo = await startEcho(id, Number(env('STRAIT_PORT', '8080')));
life.onShutdown('echo', () => echo.close());
const registry = createRegistry('echo', { cluster: id.cluster, namespace: id.namespace, pod: id.pod });
new Counter({
  name: 'strait_echo_requests_total',
  help: 'HTTP requests the echo workload answered',
  registers: [registry],
  collect() { this.reset(); this.inc(echo.counters.requests); },
});
const metrics = await serveMetrics(registry, Number(env('STRAIT_METRICS_PORT', '9464')));
life.onShutdown('metrics', () => metrics.close());
log.info({ port: echo.port, metricsPort: metrics.port }, 'echo ready');
process.send?.({ type: 'ready' });
process.on('disconnect', () => undefined);
