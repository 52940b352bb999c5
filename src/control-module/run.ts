// The control module process, assembled (daemon/control/main.ts): GitOps sync with OpenPGP
// signature enforcement, the key store and the login/gpg HTTP API with the web console on its
// port, /metrics and /readyz; in Kubernetes mode (STRAIT_STORE=kubernetes, or --kubeconfig)
// also the mesh and the multicluster control (kubernetes.ts; STRAIT_WEBHOOK_PORT, _LISTEN,
// _CONFIG, _SERVICE, _HOSTS, STRAIT_SIDECAR_IMAGE, STRAIT_DNS_PORT, STRAIT_DNS_LISTEN,
// STRAIT_CLUSTERSET_IP, ...).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { Lifecycle } from '../base/lifecycle/index.js';
import { createLogger } from '../base/log/index.js';
import { startGitOpsService } from '../gitops/control/index.js';
import { ingressSettingsFromEnv, meshConfigSettingsFromEnv, webhookRecheckMsFromEnv, webhookSettingsFromEnv } from '../mesh/control/run/index.js';
import { clustersetIPFromEnv, dnsSettingsFromEnv } from '../multicluster/control/run/index.js';
import { serveMetrics } from '../platform/metrics/index.js';
import { openKubernetesStore, type KubernetesResourceStore } from '../platform/store/index.js';
import type { Logger } from 'pino';
import { parseControlArgs, type ControlConfig } from './args.js';
import { consoleMount } from './console.js';
import { startKubernetesControl, type KubernetesControlOptions } from './kubernetes.js';
import { openControlStores } from './stores.js';

function hostPort(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':');
  return { host: listen.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(listen.slice(at + 1)) };
}

/** Kubernetes mode's settings, checked before anything starts: a bad STRAIT_DNS_PORT is a usage error. */
function kubernetesSettings(cfg: ControlConfig, env: NodeJS.ProcessEnv): Omit<KubernetesControlOptions, 'store' | 'stateDir' | 'registry' | 'log'> {
  const dns = dnsSettingsFromEnv(env);
  const meshConfig = meshConfigSettingsFromEnv(env, cfg.namespace);
  const ingress = ingressSettingsFromEnv(env);
  const recheckMs = webhookRecheckMsFromEnv(env);
  return {
    namespace: cfg.namespace,
    webhook: webhookSettingsFromEnv(env),
    recheckMs,
    clustersetIP: clustersetIPFromEnv(env),
    ...(dns ? { dns } : {}),
    ...(meshConfig ? { meshConfig } : {}),
    ...(ingress ? { ingress } : {}),
  };
}

async function startKubernetes(
  kube: KubernetesResourceStore,
  settings: ReturnType<typeof kubernetesSettings>,
  cfg: ControlConfig,
  registry: Registry,
  log: Logger,
  life: Lifecycle,
) {
  const k = await startKubernetesControl({ ...settings, store: kube, stateDir: cfg.stateDir, registry, log });
  life.onShutdown('kubernetes', () => k.close());
  return k;
}

export async function runControlModule(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cfg = parseControlArgs(argv);
  const log = createLogger('control');
  const life = new Lifecycle();
  life.handleSignals(log);
  mkdirSync(cfg.stateDir, { recursive: true, mode: 0o700 });
  const kubernetes = cfg.kubeconfig !== undefined || env['STRAIT_STORE'] === 'kubernetes';
  const settings = kubernetes ? kubernetesSettings(cfg, env) : undefined;
  const kube = kubernetes ? openKubernetesStore(cfg.kubeconfig ? { kubeConfigPath: cfg.kubeconfig } : {}) : undefined;
  const stores = await openControlStores(cfg, kube, log);
  life.onShutdown('store', () => stores.store.close());
  life.onShutdown('console stores', () => stores.console.close());
  const registry = new Registry();
  const { host, port } = hostPort(cfg.listen);
  const m = hostPort(cfg.metricsListen);
  // GET /readyz on the metrics port (deploy/control.yaml's readiness probe): 503 until the
  // API is up and, in Kubernetes mode, the webhook's caBundle is written
  let pending: () => readonly string[] = () => ['startup'];
  const metricsServer = await serveMetrics(registry, m, {}, () => pending());
  life.onShutdown('metrics', () => metricsServer.close());
  const svc = await startGitOpsService({
    store: stores.store,
    namespace: cfg.namespace,
    stateDir: cfg.stateDir,
    host,
    port,
    tls: !cfg.insecure,
    pollIntervalMs: cfg.pollIntervalSeconds * 1000,
    registry,
    log,
    ...(stores.destinations ? { destinations: stores.destinations } : {}),
    initialPasswordFile: join(cfg.stateDir, 'initial-admin-password'),
    mounts: [consoleMount(stores.console, cfg.namespace, log)],
  });
  life.onShutdown('gitops', () => svc.close());
  const k = kube && settings ? await startKubernetes(kube, settings, cfg, registry, log, life) : undefined;
  pending = k ? () => k.pending() : () => [];
  // one line on stdout for supervisors and tests
  const ready = {
    ready: true,
    api: svc.api.url,
    console: `${svc.api.url}/console/`,
    metrics: `http://${m.host.includes(':') ? `[${m.host}]` : m.host}:${metricsServer.port}/metrics`,
    namespace: cfg.namespace,
    store: kube ? 'kubernetes' : cfg.storeSocket ? 'world' : 'embedded',
    ...(k ? { webhookPort: k.webhook.port } : {}),
    ...(k?.meshConfig ? { meshConfigPort: k.meshConfig.port } : {}),
  };
  process.stdout.write(JSON.stringify(ready) + '\n');
  // the local world's supervisor waits for this on the IPC channel
  process.send?.({ type: 'ready', ...ready });
}
