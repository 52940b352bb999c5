// The world's pod runtime (daemon/pod-runtime.ts runs it): one process serving the built-in workload (strait/echo) of
// every pod of the world, instead of one Node process per pod. It runs in the world
// root; each pod's sockets (the echo port and /metrics) are made inside the pod's own
// network namespace by the C addon (setns in, socket/bind/listen, setns back) and
// adopted with server.listen({ fd }), so a pod's server lives in that pod's namespace,
// answers only there, and sees the peer addresses of that namespace.
//
// The supervisor sends over IPC the whole list of echo pods, at start and on every
// change: { type: 'pods', seq, pods: RuntimePod[] }. The runtime starts the new ones,
// closes the ones no longer listed, answers { type: 'applied', seq, failed: [...] } and,
// after the first list, { type: 'ready' }.
import { createLogger } from '../../base/log/index.js';
import { Lifecycle } from '../../base/lifecycle/index.js';
import { Counter, createRegistry, serveMetrics, type MetricsServer } from '../../platform/metrics/index.js';
import { listenInNetns } from '../../platform/netns/index.js';
import { startEcho, type EchoServer } from './echo.js';

export interface RuntimePod {
  cluster: string;
  namespace: string;
  pod: string;
  node: string;
  /** ip netns name of the pod */
  netns: string;
  port: number;
  metricsPort: number;
}

interface Serving {
  key: string;
  echo: EchoServer;
  metrics: MetricsServer;
}

const keyOf = (p: RuntimePod): string => `${p.cluster}/${p.namespace}/${p.pod}/${p.netns}`;

async function startPod(p: RuntimePod): Promise<Serving> {
  const id = { cluster: p.cluster, namespace: p.namespace, pod: p.pod, node: p.node };
  const echo = await startEcho(id, p.port, '0.0.0.0', listenInNetns(p.netns, '0.0.0.0', p.port));
  try {
    const registry = createRegistry('echo', { cluster: p.cluster, namespace: p.namespace, pod: p.pod });
    new Counter({
      name: 'strait_echo_requests_total',
      help: 'HTTP requests the echo workload answered',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(echo.counters.requests);
      },
    });
    const metrics = await serveMetrics(registry, { fd: listenInNetns(p.netns, '0.0.0.0', p.metricsPort) });
    return { key: keyOf(p), echo, metrics };
  } catch (err) {
    await echo.close();
    throw err;
  }
}

async function stopPod(s: Serving): Promise<void> {
  await Promise.all([s.echo.close(), s.metrics.close()]);
}

/** The pod runtime process: follows the supervisor's lists of echo pods until it goes away. */
export function runPodRuntime(): void {
  const log = createLogger('pod-runtime');
  const life = new Lifecycle();
  life.handleSignals(log);
  const serving = new Map<string, Serving>();
  let queue: Promise<void> = Promise.resolve();
  let announced = false;
  let latest = -1;

  const apply = (seq: number, pods: RuntimePod[]): Promise<void> => {
    queue = queue.then(async () => {
      const want = new Map(pods.map((p) => [keyOf(p), p]));
      const gone = [...serving.values()].filter((s) => !want.has(s.key));
      for (const s of gone) serving.delete(s.key);
      await Promise.all(gone.map(stopPod));
      const failed: { pod: string; error: string }[] = [];
      await Promise.all(
        [...want]
          .filter(([k]) => !serving.has(k))
          .map(async ([k, p]) => {
            try {
              serving.set(k, await startPod(p));
              log.info({ cluster: p.cluster, namespace: p.namespace, pod: p.pod, netns: p.netns, port: p.port }, 'echo serving');
            } catch (err) {
              failed.push({ pod: k, error: (err as Error).message });
              log.error({ err, pod: k }, 'echo could not start');
            }
          }),
      );
      for (const s of gone) log.info({ pod: s.key }, 'echo stopped');
      if (!announced && failed.length === 0) {
        announced = true;
        process.send?.({ type: 'ready' });
      }
      process.send?.({ type: 'applied', seq, failed });
      // a pod that could not start is tried again until a newer list replaces this one
      if (failed.length)
        setTimeout(() => {
          if (latest === seq) void apply(seq, pods);
        }, 500);
    });
    return queue;
  };

  process.on('message', (m: unknown) => {
    const msg = m as { type?: string; seq?: number; pods?: RuntimePod[] };
    if (msg?.type === 'pods' && Array.isArray(msg.pods)) {
      latest = msg.seq ?? 0;
      void apply(latest, msg.pods);
    }
  });
  life.onShutdown('pods', async () => {
    const all = [...serving.values()];
    serving.clear();
    await Promise.all(all.map(stopPod));
  });
  // the world owns us: without it there is nothing to serve for
  process.on('disconnect', () => {
    void life.shutdown(log).then(() => process.exit(0));
  });
  log.info('pod runtime started');
}
