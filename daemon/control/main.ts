// The control module process: GitOps sync with OpenPGP signature enforcement, the
// key store and the login/gpg HTTP API (port 8080).
//   node dist/daemon/control/main.js [--config FILE] [--state-dir DIR] [--namespace argocd]
//     [--listen 127.0.0.1:8080] [--insecure] [--poll-interval 180] [--store-dir DIR |
//      --store-socket SOCK --store-token-file FILE --cluster NAME | --kubeconfig FILE]
// Kubernetes mode (STRAIT_STORE=kubernetes, or --kubeconfig): the store is the API server
// (in-cluster ServiceAccount, $KUBECONFIG or --kubeconfig), and besides GitOps the process
// runs the mesh controller, the export/import sync once joined, and the sidecar-injection
// webhook (daemon/control/kubernetes.ts; STRAIT_WEBHOOK_PORT, _LISTEN, _CONFIG, _SERVICE,
// _HOSTS, STRAIT_SIDECAR_IMAGE) and, once joined, the clusterset.local DNS server
// (STRAIT_DNS_PORT, default 5353 or "off"; STRAIT_DNS_LISTEN, default 0.0.0.0).
// Flags override the YAML config file. Destinations: the in-cluster addresses
// (https://kubernetes.default.svc) map to this cluster's store; in a local world,
// https://<cluster> (or the bare cluster name) maps to that cluster's store.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { Registry } from 'prom-client';
import { parse as parseYaml } from 'yaml';
import { defineConfig, type ConfigSchema } from '../../src/base/config/index.js';
import { E } from '../../src/base/errors/index.js';
import { Lifecycle } from '../../src/base/lifecycle/index.js';
import { createLogger } from '../../src/base/log/index.js';
import { IN_CLUSTER_SERVERS, startGitOpsService } from '../../src/gitops/control/index.js';
import { serveMetrics } from '../../src/platform/metrics/index.js';
import { connectStore, openEmbeddedStore, openKubernetesStore, type ResourceStore } from '../../src/platform/store/index.js';
import { dnsSettingsFromEnv, ingressSettingsFromEnv, meshConfigSettingsFromEnv, startKubernetesControl, webhookRecheckMsFromEnv, webhookSettingsFromEnv } from './kubernetes.js';
import { consoleMount, kubernetesConsoleStores, worldConsoleStores, type ConsoleStores } from './console.js';
import { VERSION } from '../../src/platform/cli-kit/index.js';
import { runEntry } from '../entry.js';

interface ControlConfig {
  stateDir: string;
  namespace: string;
  listen: string;
  insecure: boolean;
  pollIntervalSeconds: number;
  metricsListen: string;
  storeDir?: string;
  storeSocket?: string;
  storeTokenFile?: string;
  cluster?: string;
  kubeconfig?: string;
}

const schema: ConfigSchema<ControlConfig> = {
  type: 'object',
  additionalProperties: false,
  required: ['stateDir', 'namespace', 'listen', 'insecure', 'pollIntervalSeconds', 'metricsListen'],
  properties: {
    stateDir: { type: 'string', minLength: 1 },
    namespace: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
    listen: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$' },
    insecure: { type: 'boolean' },
    pollIntervalSeconds: { type: 'number', minimum: 1, maximum: 86400 },
    metricsListen: { type: 'string', pattern: '^(\\[[0-9a-fA-F:]+\\]|[^:\\s]+):[0-9]{1,5}$' },
    storeDir: { type: 'string', nullable: true },
    storeSocket: { type: 'string', nullable: true },
    storeTokenFile: { type: 'string', nullable: true },
    cluster: { type: 'string', nullable: true },
    kubeconfig: { type: 'string', nullable: true },
  },
};
const config = defineConfig(schema, { prefix: 'control', renamed: { port: 'listen', 'poll-interval': 'pollIntervalSeconds' } });

/** a number when it is one, else the text as given (the schema then refuses it, quoting it) */
const pollFromEnv = (v: string): number | string => (/^\d{1,9}$/.test(v.trim()) ? Number(v) : v);

function parseArgs(argv: string[]): Readonly<ControlConfig> {
  const cmd = new Command('strait-control')
    .description('the control module: GitOps (Argo CD API), mesh CA and policy, export/import sync, sidecar-injection webhook')
    .version(`strait-control ${VERSION}`, '-V, --version')
    .option('--config <file>', 'YAML configuration file')
    .option('--state-dir <dir>', 'state directory (repository mirrors, embedded store)')
    .option('--namespace <ns>', "the controller's namespace")
    .option('--listen <host:port>', 'API listener')
    .option('--insecure', 'serve the API over plain HTTP (no TLS)')
    .option('--poll-interval <seconds>', 'polling interval of Git repositories (default 180, or $STRAIT_CONTROL_POLL_INTERVAL)')
    .option('--metrics-listen <host:port>', 'Prometheus /metrics listener (default 127.0.0.1:8082)')
    .option('--store-dir <dir>', 'open an embedded store in this directory')
    .option('--store-socket <path>', 'connect to the local world store API')
    .option('--store-token-file <file>', 'bearer token file of the store API')
    .option('--cluster <name>', 'this cluster in the local world')
    .option('--kubeconfig <file>', 'Kubernetes mode with this kubeconfig (else STRAIT_STORE=kubernetes: $KUBECONFIG or in-cluster)')
    .exitOverride();
  cmd.parse(argv);
  const o = cmd.opts<Record<string, string | boolean | undefined>>();
  let file: Record<string, unknown> = {};
  if (typeof o['config'] === 'string') {
    try {
      file = (parseYaml(readFileSync(o['config'], 'utf8')) ?? {}) as Record<string, unknown>;
    } catch (err) {
      throw E.fileUnreadable(o['config'], (err as Error).message);
    }
  }
  const stateDir = (o['stateDir'] as string | undefined) ?? (file['stateDir'] as string | undefined) ?? process.env['STATE_DIRECTORY'] ?? join(process.cwd(), '.strait-control');
  const merged: Record<string, unknown> = {
    namespace: 'argocd', listen: '127.0.0.1:8080', insecure: false, pollIntervalSeconds: 180, metricsListen: '127.0.0.1:8082',
    ...file,
    // the environment (a local world's control module: `STRAIT_CONTROL_POLL_INTERVAL=60 strait up`) over the file, flags over both
    ...(process.env['STRAIT_CONTROL_POLL_INTERVAL'] !== undefined ? { pollIntervalSeconds: pollFromEnv(process.env['STRAIT_CONTROL_POLL_INTERVAL']) } : {}),
    stateDir,
    ...(o['namespace'] ? { namespace: o['namespace'] } : {}),
    ...(o['listen'] ? { listen: o['listen'] } : {}),
    ...(o['insecure'] ? { insecure: true } : {}),
    ...(o['pollInterval'] ? { pollIntervalSeconds: Number(o['pollInterval']) } : {}),
    ...(o['metricsListen'] ? { metricsListen: o['metricsListen'] } : {}),
    ...(o['storeDir'] ? { storeDir: o['storeDir'] } : {}),
    ...(o['storeSocket'] ? { storeSocket: o['storeSocket'] } : {}),
    ...(o['storeTokenFile'] ? { storeTokenFile: o['storeTokenFile'] } : {}),
    ...(o['cluster'] ? { cluster: o['cluster'] } : {}),
    ...(o['kubeconfig'] ? { kubeconfig: o['kubeconfig'] } : {}),
  };
  return config.parse(merged, typeof o['config'] === 'string' ? o['config'] : '--flags');
}

function hostPort(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':');
  return { host: listen.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(listen.slice(at + 1)) };
}

async function main(): Promise<void> {
  const cfg = parseArgs(process.argv);
  const log = createLogger('control');
  const life = new Lifecycle();
  life.handleSignals(log);
  mkdirSync(cfg.stateDir, { recursive: true, mode: 0o700 });
  let store: ResourceStore;
  let destinations: ((server: string) => ResourceStore | undefined) | undefined;
  let consoleOf: (() => Promise<ConsoleStores>) | undefined;
  const kubernetes = cfg.kubeconfig !== undefined || process.env['STRAIT_STORE'] === 'kubernetes';
  // checked before anything starts: a bad STRAIT_DNS_PORT is a usage error
  const dnsSettings = kubernetes ? dnsSettingsFromEnv(process.env) : undefined;
  const meshConfigSettings = kubernetes ? meshConfigSettingsFromEnv(process.env, cfg.namespace) : undefined;
  const ingressSettings = kubernetes ? ingressSettingsFromEnv(process.env) : undefined;
  const recheckMs = kubernetes ? webhookRecheckMsFromEnv(process.env) : undefined;
  const kube = kubernetes ? openKubernetesStore(cfg.kubeconfig ? { kubeConfigPath: cfg.kubeconfig } : {}) : undefined;
  if (kube) {
    store = kube;
  } else if (cfg.storeSocket) {
    const token = readFileSync(cfg.storeTokenFile ?? join(cfg.stateDir, 'store.token'), 'utf8').trim();
    const own = cfg.cluster ?? 'cluster-a';
    const socketPath = cfg.storeSocket;
    store = connectStore({ socketPath, token, cluster: own });
    consoleOf = () => worldConsoleStores(socketPath, token, own, store);
    const others = new Map<string, ResourceStore>();
    destinations = (server: string) => {
      if (IN_CLUSTER_SERVERS.includes(server)) return store;
      const name = server.replace(/^https?:\/\//, '').replace(/[:/].*$/, '');
      if (!/^[a-z0-9][-a-z0-9]*$/.test(name) || name === 'broker') return undefined;
      if (name === own) return store;
      let s = others.get(name);
      if (!s) {
        s = connectStore({ socketPath, token, cluster: name });
        others.set(name, s);
      }
      return s;
    };
  } else {
    store = openEmbeddedStore({ dir: cfg.storeDir ?? join(cfg.stateDir, 'store') });
  }
  life.onShutdown('store', () => store.close());
  // the web console (src/console) on the API's port: every cluster of the world, or this one and its broker
  const consoleStores = kube ? await kubernetesConsoleStores(kube, log)
    : consoleOf ? await consoleOf() : { stores: new Map([[cfg.cluster ?? 'local', store]]), home: cfg.cluster ?? 'local', close: async () => undefined };
  life.onShutdown('console stores', () => consoleStores.close());
  const registry = new Registry();
  const { host, port } = hostPort(cfg.listen);
  const m = hostPort(cfg.metricsListen);
  // GET /readyz on the metrics port (deploy/control.yaml's readiness probe): 503 until the
  // API is up and, in Kubernetes mode, the webhook's caBundle is written
  let pending: () => readonly string[] = () => ['startup'];
  const metricsServer = await serveMetrics(registry, m, {}, () => pending());
  life.onShutdown('metrics', () => metricsServer.close());
  const svc = await startGitOpsService({
    store, namespace: cfg.namespace, stateDir: cfg.stateDir, host, port, tls: !cfg.insecure,
    pollIntervalMs: cfg.pollIntervalSeconds * 1000, registry, log, ...(destinations ? { destinations } : {}),
    initialPasswordFile: join(cfg.stateDir, 'initial-admin-password'),
    mounts: [consoleMount(consoleStores, cfg.namespace, log)],
  });
  life.onShutdown('gitops', () => svc.close());
  let webhookPort: number | undefined;
  let meshConfigPort: number | undefined;
  if (kube) {
    const k = await startKubernetesControl({
      store: kube, namespace: cfg.namespace, stateDir: cfg.stateDir, registry, log, webhook: webhookSettingsFromEnv(process.env),
      ...(dnsSettings ? { dns: dnsSettings } : {}),
      ...(meshConfigSettings ? { meshConfig: meshConfigSettings } : {}),
      ...(ingressSettings ? { ingress: ingressSettings } : {}),
      ...(recheckMs !== undefined ? { recheckMs } : {}),
    });
    life.onShutdown('kubernetes', () => k.close());
    webhookPort = k.webhook.port;
    meshConfigPort = k.meshConfig?.port;
    pending = () => k.pending();
  } else {
    pending = () => [];
  }
  // one line on stdout for supervisors and tests
  const mport = metricsServer.port;
  const ready = {
    ready: true, api: svc.api.url, console: `${svc.api.url}/console/`, metrics: `http://${m.host.includes(':') ? `[${m.host}]` : m.host}:${mport}/metrics`, namespace: cfg.namespace,
    store: kube ? 'kubernetes' : cfg.storeSocket ? 'world' : 'embedded', ...(webhookPort !== undefined ? { webhookPort } : {}),
    ...(meshConfigPort !== undefined ? { meshConfigPort } : {}),
  };
  console.log(JSON.stringify(ready));
  // the local world's supervisor waits for this on the IPC channel
  process.send?.({ type: 'ready', ...ready });
}

runEntry(main);
