// The sidecar proxy process: one per injected pod, inside the pod's network namespace.
//   node dist/agents/sidecar/main.js --config FILE [--inbound-port 15006] [--outbound-port 15001]
//     [--admin 127.0.0.1:15000 | --admin-socket PATH] [--bind 0.0.0.0]
//     [--app HOST:PORT] [--outbound-destination HOST:PORT] [--uid 1337] [--config-ipc] [--metrics HOST:PORT]
//     [--flow-limit 256] [--flow-report-ms 2000]
//     [--control URL [--control-token FILE] [--control-ca FILE]]
// Kubernetes mode (the injected strait-proxy container): --control names the control module's
// mesh configuration service; the proxy binds nothing until the first configuration came from
// it, then follows it (long poll) with the pod's projected token (docs/kubernetes.md).
// Without --app / --outbound-destination the proxy serves connections redirected by the
// pod's nftables rules (sidecarRedirectRules) and reads SO_ORIGINAL_DST.
// Configuration: the JSON file given with --config (re-read when it changes; with
// --config-ipc read once, then pushed as {type:'config', config} over the IPC channel by the
// mesh agent) and PUT /config on the admin listener; GET /config, GET /metrics, GET /ready, GET /flows.
// Inbound flows seen (docs/mesh.md, Observed traffic): with --config-ipc, what changed is sent to
// the mesh agent as {type:'flows', report} at most every --flow-report-ms, and only when it changed;
// with --control, POSTed to the control module's /v1/flows (kept and sent again after a failure).
// On start it prints one JSON line to stdout: {"ready":true,"inbound":P,"outbound":P,"admin":...}.
import { readFileSync } from 'node:fs';
import { watchFile } from '../../src/platform/fs/index.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { E, isStraitError } from '../../src/base/errors/index.js';
import { listenServer } from '../../src/base/net/index.js';
import { createLogger } from '../../src/base/log/index.js';
import { Lifecycle } from '../../src/base/lifecycle/index.js';
import { Registry, registerProxyMetrics } from '../../src/mesh/control/metrics/index.js';
import { DEFAULT_FLOW_LIMIT, followMeshConfig, MAX_FLOW_LIMIT, meshFlowsPoster, originalDst, SidecarProxy, type Address } from '../../src/mesh/dataplane/proxy/index.js';
import { HttpError, readJsonBody, sendError } from '../../src/platform/http/index.js';
import { answerMetrics, serveMetrics } from '../../src/platform/metrics/index.js';
import { positiveIntArg, printedInfo, runEntry } from '../../daemon/entry.js';

function hostPort(v: string | undefined, what: string): Address | undefined {
  if (v === undefined) return undefined;
  const m = /^(.+):(\d{1,5})$/.exec(v);
  if (!m) throw E.usage(`${what} must be HOST:PORT, got ${JSON.stringify(v)}`, { value: v });
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

const HELP = `usage: strait-sidecar --config FILE [options]

The sidecar proxy of one injected pod, inside the pod's network namespace (docs/mesh.md).
Without --app / --outbound-destination it serves the connections redirected by the pod's
nftables rules and reads SO_ORIGINAL_DST.

  --config FILE                  configuration (JSON; re-read when it changes)
  --inbound-port N               inbound listener (default 15006)
  --outbound-port N              outbound listener (default 15001)
  --admin HOST:PORT              admin API: GET/PUT /config, /metrics, /ready, /flows (default 127.0.0.1:15000)
  --admin-socket PATH            the admin API on a unix socket instead
  --bind ADDR                    address of the listeners (default 0.0.0.0)
  --app HOST:PORT                forward inbound connections here (no redirect)
  --outbound-destination HOST:PORT   forward outbound connections here (no redirect)
  --uid N                        run as this uid once the listeners are bound
  --config-ipc                   read the file once, then take configurations over IPC
  --metrics HOST:PORT            Prometheus /metrics
  --flow-limit N                 inbound flows kept (default 256; the one seen longest ago is evicted)
  --flow-report-ms N             with --config-ipc or --control: send changed flows at most this often (default 2000)
  --control URL                  take the configuration from the control module's mesh configuration
                                 service (https://strait-control.strait-system.svc:15012)
  --control-token FILE           the pod's ServiceAccount token, audience "strait"
                                 (default /var/run/secrets/strait/token/token)
  --control-ca FILE              the mesh root the service's certificate chains to
                                 (default /var/run/secrets/strait/root/root-cert.pem)
  -h, --help                     this help
  -V, --version                  the version
`;

async function main(): Promise<void> {
  if (await printedInfo(process.argv, 'strait-sidecar', HELP)) return;
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      'inbound-port': { type: 'string', default: '15006' },
      'outbound-port': { type: 'string', default: '15001' },
      admin: { type: 'string', default: '127.0.0.1:15000' },
      'admin-socket': { type: 'string' },
      bind: { type: 'string', default: '0.0.0.0' },
      app: { type: 'string' },
      'outbound-destination': { type: 'string' },
      uid: { type: 'string' },
      'config-ipc': { type: 'boolean', default: false },
      metrics: { type: 'string' },
      'flow-limit': { type: 'string', default: String(DEFAULT_FLOW_LIMIT) },
      'flow-report-ms': { type: 'string', default: '2000' },
      control: { type: 'string' },
      'control-token': { type: 'string', default: '/var/run/secrets/strait/token/token' },
      'control-ca': { type: 'string', default: '/var/run/secrets/strait/root/root-cert.pem' },
    },
  });
  if (values.control !== undefined && (values.config !== undefined || values['config-ipc'])) throw E.usage('--control takes the configuration from the control module: give no --config or --config-ipc with it');
  if (values.control !== undefined && !/^https:\/\/[^/]+$/.test(values.control)) throw E.usage(`--control must be https://HOST:PORT, got ${JSON.stringify(values.control)}`, { value: values.control });
  const flowLimit = positiveIntArg(values['flow-limit'] as string, '--flow-limit', MAX_FLOW_LIMIT);
  const flowReportMs = positiveIntArg(values['flow-report-ms'] as string, '--flow-report-ms', 3_600_000);
  const log = createLogger('sidecar');
  const life = new Lifecycle();
  // Kubernetes mode: nothing is bound before the first configuration came (the pod's redirect
  // is in place already, so until then its connections are refused: fail closed)
  let control: { first: Promise<unknown>; onConfig?: (c: unknown) => void; stop(): void } | undefined;
  if (values.control !== undefined) {
    let resolveFirst: (c: unknown) => void = () => undefined;
    const first = new Promise<unknown>((r) => { resolveFirst = r; });
    let lastError = '';
    const c: NonNullable<typeof control> = {
      first,
      stop: () => undefined,
    };
    const client = followMeshConfig({
      url: values.control, path: '/v1/sidecar', tokenFile: values['control-token'] as string, caFile: values['control-ca'] as string,
      onConfig: (config, outside) => {
        lastError = '';
        if (c.onConfig) c.onConfig(config);
        else {
          log.info({ control: values.control, outside }, outside ? 'not in the mesh: passing traffic through' : 'configuration received');
          resolveFirst(config);
        }
      },
      onError: (message) => {
        if (message !== lastError) log.warn({ err: message }, 'mesh configuration: retrying');
        lastError = message;
      },
    });
    c.stop = () => client.stop();
    control = c;
  }
  const load = async (): Promise<unknown> => {
    if (control) return control.first;
    if (!values.config) return { inbound: { defaultMode: 'PERMISSIVE' }, outbound: { default: { mode: 'DISABLE' } } };
    return JSON.parse(readFileSync(values.config, 'utf8'));
  };
  const proxy = new SidecarProxy(await load(), { originalDst, flowLimit, onEvent: (ev) => log.debug(ev, 'connection') });
  if (control) {
    const c = control;
    c.onConfig = (config) => {
      try {
        proxy.update(config);
        log.info({ updates: proxy.metrics.configUpdates }, 'configuration from the control module applied');
      } catch (err) {
        log.warn({ err: String(err) }, 'configuration from the control module rejected; keeping the previous one');
      }
    };
    life.onShutdown('control', () => c.stop());
    // the flows seen, to the control module, which writes the pod's MeshTrafficObservation
    let lastFlowError = '';
    const poster = meshFlowsPoster({
      url: values.control as string, tokenFile: values['control-token'] as string, caFile: values['control-ca'] as string,
      onError: (message) => {
        if (message !== lastFlowError) log.warn({ err: message }, 'flow report not delivered; kept for the next one');
        lastFlowError = message;
      },
    });
    const flowTimer = setInterval(() => {
      const report = proxy.flows.report();
      if (report || poster.queued > 0) void poster.send(report);
    }, flowReportMs);
    flowTimer.unref();
    life.onShutdown('flows', () => clearInterval(flowTimer));
  }
  const app = hostPort(values.app, '--app');
  const dest = hostPort(values['outbound-destination'], '--outbound-destination');
  const inbound = await proxy.listenInbound({ host: values.bind as string, port: Number(values['inbound-port']), app: app ?? 'original-dst' });
  const outbound = await proxy.listenOutbound({ host: values.bind as string, port: Number(values['outbound-port']), destination: dest ?? 'original-dst' });
  life.onShutdown('proxy', () => proxy.close());

  if (values['config-ipc']) {
    // our configuration comes from the mesh agent only: when it dies, we go too (its
    // successor starts a fresh sidecar, which needs the ports)
    process.on('disconnect', () => { void life.shutdown(log).then(() => process.exit(0)); });
    // the supervisor (mesh agent) pushes each new configuration over the IPC channel
    process.on('message', (m: { type?: string; config?: unknown }) => {
      if (m?.type !== 'config') return;
      try {
        proxy.update(m.config);
        process.send?.({ type: 'config-applied', updates: proxy.metrics.configUpdates });
      } catch (err) {
        log.warn({ err: String(err) }, 'pushed configuration rejected; keeping the previous one');
        process.send?.({ type: 'config-rejected', error: String((err as Error).message) });
      }
    });
    // the flows seen, to the agent that writes them into the store (only what changed, bounded)
    const flowTimer = setInterval(() => {
      const report = proxy.flows.report();
      if (report && process.connected) process.send?.({ type: 'flows', report });
    }, flowReportMs);
    flowTimer.unref();
    life.onShutdown('flows', () => clearInterval(flowTimer));
  } else if (values.config) {
    const file = values.config;
    const watcher = watchFile(file, () => {
      try {
        // applied even when equal to the file's last content: PUT /config may have changed the proxy since
        proxy.update(JSON.parse(readFileSync(file, 'utf8')));
        log.info({ file }, 'configuration reloaded from file');
      } catch (err) {
        log.warn({ err: String(err), file }, 'configuration file rejected; keeping the previous one');
      }
    });
    life.onShutdown('watch', () => watcher.close());
  }

  const reg = new Registry();
  registerProxyMetrics(reg, proxy.metrics);
  const admin = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      try {
        if (req.method === 'PUT' && req.url === '/config' && (values['config-ipc'] || values.control !== undefined)) {
          // under the mesh agent only the agent configures the proxy: the workload shares this
          // namespace and must not be able to switch its own STRICT off
          throw E.meshConfigManaged();
        } else if (req.method === 'PUT' && req.url === '/config') {
          proxy.update(await readJsonBody(req, { limit: 4 << 20 }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ applied: true, updates: proxy.metrics.configUpdates }));
        } else if (req.method === 'GET' && req.url === '/config') {
          const { identity, ...rest } = proxy.config;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...rest, identity: identity ? { certPem: identity.certPem } : undefined }));
        } else if (req.method === 'GET' && req.url === '/flows') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ limit: proxy.flows.limit, evicted: proxy.flows.evictedTotal, flows: proxy.flows.snapshot() }));
        } else if (req.method === 'GET' && req.url === '/metrics') {
          answerMetrics(reg, res);
        } else if (req.method === 'GET' && req.url === '/ready') {
          res.writeHead(200).end('ok\n');
        } else {
          res.writeHead(404).end();
        }
      } catch (err) {
        const status = err instanceof HttpError ? err.status : isStraitError(err) ? err.httpStatus : err instanceof SyntaxError ? 400 : 500;
        const body = isStraitError(err) ? err.toJSON() : { code: 'STRAIT_ERR_MESH_CONFIG_INVALID', message: String((err as Error).message) };
        sendError(req, res, { status, body });
      }
    })();
  });
  const adminAddr = values['admin-socket'] ?? hostPort(values.admin, '--admin');
  const adminServer = await listenServer(admin, typeof adminAddr === 'string' ? { path: adminAddr } : adminAddr as Address);
  life.onShutdown('admin', () => adminServer.close());
  if (values.metrics) {
    // Prometheus only, reachable from outside the pod (Istio's 15020); excluded from the redirect
    const m = hostPort(values.metrics, '--metrics') as Address;
    const ms = await serveMetrics(reg, m);
    life.onShutdown('metrics', () => ms.close());
  }
  life.handleSignals(log);
  if (values.uid !== undefined) {
    // listeners are bound; from here on run as the proxy uid that the pod's nftables rules exempt
    const uid = Number(values.uid);
    process.setgid?.(uid);
    process.setuid?.(uid);
  }
  const a = adminServer.address;
  process.stdout.write(JSON.stringify({ ready: true, inbound: inbound.port, outbound: outbound.port, admin: typeof a === 'string' ? a : a.port }) + '\n');
  // the world's process table waits for this when it started us with an IPC channel
  process.send?.({ type: 'ready', inbound: inbound.port, outbound: outbound.port });
  log.info({ inbound: inbound.port, outbound: outbound.port }, 'sidecar ready');
}

runEntry(main);
