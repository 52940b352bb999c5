// The ingress gateway process: external plaintext HTTP in, mTLS (or plaintext, per the
// DestinationRules) into the mesh. Its configuration file is written by the mesh agent
// (<mesh dir>/ingress.json) and re-read when it changes.
//   node dist/daemon/mesh-ingress/main.js --config FILE [--listen 0.0.0.0:15080] [--listen-unix PATH] [--metrics HOST:PORT]
//   node dist/daemon/mesh-ingress/main.js --control URL [...]   (Kubernetes mode: deploy/mesh-ingress.yaml)
// Prints {"ready":true,...} on stdout, and sends {type:'ready'} over IPC when it has a channel.
import { existsSync, readFileSync } from 'node:fs';
import { watchFile } from '../../../platform/fs/index.js';
import { parseArgs } from 'node:util';
import { E } from '../../../base/errors/index.js';
import { Lifecycle } from '../../../base/lifecycle/index.js';
import { createLogger, type Logger } from '../../../base/log/index.js';
import { Registry, registerIngressMetrics } from '../metrics/index.js';
import { followMeshConfig, IngressGateway } from '../../dataplane/proxy/index.js';
import { serveMetrics } from '../../../platform/metrics/index.js';

function hostPort(v: string): { host: string; port: number } {
  const m = /^(.+):(\d{1,5})$/.exec(v);
  if (!m) throw E.usage(`expected HOST:PORT, got ${JSON.stringify(v)}`, { value: v });
  return { host: m[1] as string, port: Number(m[2]) };
}

export const MESH_INGRESS_HELP = `usage: strait-mesh-ingress (--config FILE | --control URL) [--listen HOST:PORT] [--listen-unix PATH] [--metrics HOST:PORT]

The mesh ingress gateway: plaintext HTTP in, mTLS (or plaintext, per the DestinationRules)
into the mesh (docs/mesh.md). The configuration file is written by the mesh agent and
re-read when it changes.

  --config FILE          the ingress configuration (JSON, <mesh dir>/ingress.json)
  --control URL          Kubernetes mode: take it from the control module's mesh configuration
                         service instead (https://strait-control.strait-system.svc:15012)
  --control-token FILE   this pod's ServiceAccount token, audience "strait"
                         (default /var/run/secrets/strait/token/token)
  --control-ca FILE      the mesh root (default /var/run/secrets/strait/root/ca.crt: ConfigMap strait-mesh-ca)
  --listen HOST:PORT     HTTP listener (default 0.0.0.0:15080)
  --listen-unix PATH     also serve on this unix socket
  --metrics HOST:PORT    Prometheus /metrics
  -h, --help             this help
  -V, --version          the version
`;

/** Kubernetes mode: the gateway's configuration followed from the control module's mesh configuration service. */
async function ingressFromControl(control: { url: string; tokenFile: string; caFile: string }, log: Logger, life: Lifecycle): Promise<IngressGateway> {
  // with this pod's
  // token (its ServiceAccount is the gateway's identity); nothing listens before the first one
  let resolveFirst: (c: unknown) => void = () => undefined;
  const first = new Promise<unknown>((r) => {
    resolveFirst = r;
  });
  const holder: { gw?: IngressGateway } = {};
  let lastError = '';
  const client = followMeshConfig({
    url: control.url,
    path: '/v1/ingress',
    tokenFile: control.tokenFile,
    caFile: control.caFile,
    onConfig: (config) => {
      lastError = '';
      if (!holder.gw) {
        resolveFirst(config);
        return;
      }
      try {
        holder.gw.update(config as ConstructorParameters<typeof IngressGateway>[0]);
        log.info('ingress configuration from the control module applied');
      } catch (err) {
        log.warn({ err: String(err) }, 'ingress configuration rejected; keeping the previous one');
      }
    },
    onError: (message) => {
      if (message !== lastError) log.warn({ err: message }, 'mesh configuration: retrying');
      lastError = message;
    },
  });
  life.onShutdown('control', () => client.stop());
  const gw = new IngressGateway((await first) as ConstructorParameters<typeof IngressGateway>[0]);
  holder.gw = gw;
  return gw;
}

/** The configuration from a file (the world's mesh agent writes it), reloaded when it changes. */
async function ingressFromFile(file: string, log: Logger, life: Lifecycle): Promise<IngressGateway> {
  // the mesh agent writes the file; in a world both start together
  for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  const gw = new IngressGateway(JSON.parse(readFileSync(file, 'utf8')));
  const watcher = watchFile(file, () => {
    try {
      gw.update(JSON.parse(readFileSync(file, 'utf8')));
      log.info({ file }, 'ingress configuration reloaded');
    } catch (err) {
      log.warn({ err: String(err) }, 'ingress configuration rejected; keeping the previous one');
    }
  });
  life.onShutdown('watch', () => watcher.close());
  return gw;
}

export async function runMeshIngress(): Promise<void> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      listen: { type: 'string', default: '0.0.0.0:15080' },
      'listen-unix': { type: 'string' },
      metrics: { type: 'string' },
      control: { type: 'string' },
      'control-token': { type: 'string', default: '/var/run/secrets/strait/token/token' },
      'control-ca': { type: 'string', default: '/var/run/secrets/strait/root/ca.crt' },
    },
  });
  if (!values.config && !values.control) throw E.usage('--config FILE or --control URL is required (add --help for usage)');
  if (values.config && values.control) throw E.usage('give --config FILE or --control URL, not both');
  if (values.control !== undefined && !/^https:\/\/[^/]+$/.test(values.control))
    throw E.usage(`--control must be https://HOST:PORT, got ${JSON.stringify(values.control)}`, { value: values.control });
  const log = createLogger('mesh-ingress');
  const life = new Lifecycle();
  const l = hostPort(values.listen as string);
  const gw = values.control
    ? await ingressFromControl({ url: values.control, tokenFile: values['control-token'] as string, caFile: values['control-ca'] as string }, log, life)
    : await ingressFromFile(values.config as string, log, life);
  const addr = await gw.listen(l.host, l.port);
  if (values['listen-unix']) await gw.listenPath(values['listen-unix']);
  life.onShutdown('ingress', () => gw.close());
  if (values.metrics) {
    const reg = new Registry();
    registerIngressMetrics(reg, gw.metrics);
    const m = hostPort(values.metrics);
    const srv = await serveMetrics(reg, m);
    life.onShutdown('metrics', () => srv.close());
  }
  life.handleSignals(log);
  process.stdout.write(JSON.stringify({ ready: true, port: addr.port, unix: values['listen-unix'] ?? null }) + '\n');
  process.send?.({ type: 'ready', port: addr.port });
}
