// The node-level mesh proxy: one process per node serves every injected pod of the node
// (docs/mesh-node.md). Started by the mesh agent with an IPC channel; runs as root in the
// world's root namespace and owns listeners inside each pod's network namespace.
//   node dist/agents/mesh-node/main.js [--node NAME] [--inbound-port 15006] [--outbound-port 15001]
//     [--mark 1337] [--metrics-port 15020 | 0]
// IPC from the agent:
//   {type:'pod', pod:'ns/name', netns, configFile}   serve the pod (configuration read from the file)
//   {type:'config', pod, netns, config}              a new configuration (also attaches a pod not yet served)
//   {type:'remove', pod}                             stop serving the pod
// IPC to the agent: {type:'ready'}, {type:'pod-ready', pod}, {type:'pod-failed', pod, error},
// {type:'config-applied', pod}, {type:'config-rejected', pod, error}.
// When the agent goes away (the IPC channel closes), the proxy goes too: its successor
// starts a fresh one, which needs the pods' ports.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { E, positiveIntArg } from '../../../base/errors/index.js';
import { createLogger, type Logger } from '../../../base/log/index.js';
import { Lifecycle } from '../../../base/lifecycle/index.js';
import { Registry, registerProxyMetrics } from '../metrics/index.js';
import { MAX_FLOW_LIMIT, NodeProxy, PROXY_MARK } from '../../dataplane/proxy/index.js';
import { serveMetrics, type MetricsServer } from '../../../platform/metrics/index.js';

export const NODE_PROXY_HELP = `usage: strait-mesh-node [options] (started by the mesh agent, configured over IPC)

The node-level mesh proxy: serves every injected pod of a node from one process, with
listeners inside each pod's network namespace, each pod's own identity and the sidecar's
semantics (docs/mesh-node.md).

  --node NAME            the node it serves (for logs)
  --inbound-port N       the pods' inbound redirect port (default 15006)
  --outbound-port N      the pods' outbound redirect port (default 15001)
  --mark N               SO_MARK of the proxy's sockets, spared by the pods' rules (default ${PROXY_MARK})
  --metrics-port N       serve each pod's proxy metrics on this port inside the pod (default 15020; 0 = none)
  --flow-limit N         inbound flows kept per pod (default 256; the one seen longest ago is evicted)
  --flow-report-ms N     send each pod's changed flows to the mesh agent at most this often (default 2000)
  -h, --help             this help
  -V, --version          the version
`;

type Message = { type?: string; pod?: string; netns?: string; configFile?: string; config?: unknown };

function port(v: string | undefined, what: string): number {
  const n = Number(v);
  if (!/^\d{1,5}$/.test(v ?? '') || n > 65535) throw E.usage(`${what} must be a port number, got ${JSON.stringify(v)}`, { value: v });
  return n;
}

type Send = (m: Record<string, unknown>) => void;
type Serve = (pod: string, netns: string, config: unknown) => Promise<void>;

/** The flags, checked. */
function nodeProxyArgs() {
  const { values } = parseArgs({
    options: {
      node: { type: 'string', default: 'node' },
      'inbound-port': { type: 'string', default: '15006' },
      'outbound-port': { type: 'string', default: '15001' },
      mark: { type: 'string', default: String(PROXY_MARK) },
      'metrics-port': { type: 'string', default: '15020' },
      'flow-limit': { type: 'string' },
      'flow-report-ms': { type: 'string', default: '2000' },
    },
  });
  if (!process.send) throw E.usage('strait-mesh-node is started by the mesh agent with an IPC channel (docs/mesh-node.md)');
  const mark = Number(values.mark);
  if (!Number.isInteger(mark) || mark <= 0 || mark > 0xffffffff)
    throw E.usage(`--mark must be a positive 32-bit integer, got ${JSON.stringify(values.mark)}`, { value: values.mark });
  const metricsPort = port(values['metrics-port'], '--metrics-port');
  const flowLimit = values['flow-limit'] === undefined ? undefined : positiveIntArg(values['flow-limit'], '--flow-limit', MAX_FLOW_LIMIT);
  const flowReportMs = positiveIntArg(values['flow-report-ms'], '--flow-report-ms', 3_600_000);
  return {
    node: values.node as string,
    inboundPort: port(values['inbound-port'], '--inbound-port'),
    outboundPort: port(values['outbound-port'], '--outbound-port'),
    mark,
    metricsPort,
    flowLimit,
    flowReportMs,
  };
}

/** One message of the mesh agent: a pod to serve (its configuration file), a new configuration, a pod gone. */
async function onMessage(m: Message, proxy: NodeProxy, metrics: Map<string, MetricsServer>, serve: Serve, send: Send, log: Logger): Promise<void> {
  const pod = m?.pod;
  if (typeof pod !== 'string') return;
  if (m.type === 'remove') {
    await metrics.get(pod)?.close();
    metrics.delete(pod);
    await proxy.removePod(pod);
    log.info({ pod, pods: proxy.size }, 'pod no longer served');
    return;
  }
  if (typeof m.netns !== 'string') return;
  if (m.type === 'pod') {
    try {
      await serve(pod, m.netns, JSON.parse(readFileSync(m.configFile as string, 'utf8')));
    } catch (err) {
      await metrics.get(pod)?.close();
      metrics.delete(pod);
      await proxy.removePod(pod);
      send({ type: 'pod-failed', pod, error: (err as Error).message });
    }
  } else if (m.type === 'config') {
    try {
      await serve(pod, m.netns, m.config);
    } catch (err) {
      log.warn({ pod, err: String(err) }, 'pushed configuration rejected; keeping the previous one');
      send({ type: proxy.pod(pod) ? 'config-rejected' : 'pod-failed', pod, error: (err as Error).message });
    }
  }
}

export async function runNodeProxy(): Promise<void> {
  const a = nodeProxyArgs();
  const log = createLogger('mesh-node', { node: a.node });
  const life = new Lifecycle();
  const proxy = new NodeProxy({
    inboundPort: a.inboundPort,
    outboundPort: a.outboundPort,
    mark: a.mark,
    ...(a.flowLimit !== undefined ? { flowLimit: a.flowLimit } : {}),
    // per connection: only when someone reads it
    ...(log.isLevelEnabled('debug') ? { onEvent: (pod: string, ev: object) => log.debug({ pod, ...ev }, 'connection') } : {}),
  });
  const metrics = new Map<string, MetricsServer>();
  const send = (m: Record<string, unknown>): void => {
    if (process.connected) process.send?.(m);
  };

  const serve = async (pod: string, netns: string, config: unknown): Promise<void> => {
    const had = proxy.pod(pod);
    const p = await proxy.addPod(pod, netns, config);
    if (had && had.proxy === p.proxy) {
      send({ type: 'config-applied', pod });
      return;
    }
    // a new attachment (first time, or the pod's namespace changed): its own metrics listener
    await metrics.get(pod)?.close();
    metrics.delete(pod);
    if (a.metricsPort !== 0) {
      const reg = new Registry();
      registerProxyMetrics(reg, p.proxy.metrics);
      metrics.set(pod, await serveMetrics(reg, { fd: proxy.listenIn(pod, '0.0.0.0', a.metricsPort) }));
    }
    log.info({ pod, netns, inbound: p.inbound.port, outbound: p.outbound.port, pods: proxy.size }, 'serving pod');
    send({ type: 'pod-ready', pod });
  };

  process.on('message', (m: Message) => {
    void onMessage(m, proxy, metrics, serve, send, log);
  });
  // each pod's inbound flows, to the agent that writes them into the store (only what changed)
  const flowTimer = setInterval(() => {
    for (const p of proxy.list()) {
      const report = p.proxy.flows.report();
      if (report) send({ type: 'flows', pod: p.key, report });
    }
  }, a.flowReportMs);
  flowTimer.unref();
  life.onShutdown('flows', () => clearInterval(flowTimer));
  process.on('disconnect', () => {
    void life.shutdown(log).then(() => process.exit(0));
  });
  life.onShutdown('pods', async () => {
    await Promise.all([...metrics.values()].map((s) => s.close()));
    await proxy.close();
  });
  life.handleSignals(log);
  send({ type: 'ready' });
  log.info({ mark: a.mark }, 'node proxy ready');
}
