// The control module in Kubernetes mode (STRAIT_STORE=kubernetes, deploy/control.yaml):
// besides GitOps sync (started by main.ts on the same store), the mesh controller (the
// root CA kept in Secret strait-mesh-ca, workload certificates, istio-ca-root-cert in
// member namespaces, generated policy), the export/import sync with the broker once this
// cluster has joined (strait join --kubeconfig), the clusterset.local DNS server once joined
// (5353, behind the Service strait-dns: the cluster's CoreDNS forwards clusterset.local to
// it, as to Lighthouse's), and the sidecar-injection webhook on 9443 with a serving
// certificate it makes itself and writes into the caBundle of its MutatingWebhookConfiguration.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { E, isStraitError } from '../../src/base/errors/index.js';
import { createHash } from 'node:crypto';
import { CertRotator, loadOrCreateCaInStore, MeshController, serveMeshConfig, type IngressRouteSpec, type MeshCaller, type MeshConfigServer } from '../../src/mesh/control/index.js';
import type { ClustersetDns } from '../../src/multicluster/control/clusterset-dns/index.js';
import { runMulticluster } from '../../src/multicluster/control/run/index.js';
import { ObservationWriter } from '../../src/mesh/control/observe/index.js';
import { createWebhookTls, patchWebhookCaBundle, serveSidecarInjector, serviceHosts, TOKEN_AUDIENCE, webhookCaBundleCurrent, type SidecarInjector } from '../../src/mesh/control/sidecar-injector/index.js';
import type { KubeObject, KubernetesResourceStore } from '../../src/platform/store/index.js';

export interface KubernetesControlOptions {
  store: KubernetesResourceStore;
  /** the control module's namespace (mesh CA Secret, webhook Service) */
  namespace: string;
  stateDir: string;
  registry: Registry;
  log: Logger;
  webhook: {
    host: string;
    port: number;
    /** MutatingWebhookConfiguration whose caBundle this process writes; undefined: none (STRAIT_WEBHOOK_CONFIG=off) */
    configName: string | undefined;
    /** the Service the API server calls (its DNS names go into the certificate) */
    service: string;
    /** more names or addresses for the certificate */
    extraHosts: string[];
    /** image of the injected containers */
    image: string;
    /** this pod's name: the injected containers get the image this pod runs (unless STRAIT_SIDECAR_IMAGE) */
    imageFromPod?: string;
  };
  /**
   * the mesh configuration service (TLS, certificate from the mesh CA for the webhook Service's
   * names): the injected proxies take their configuration from it at `url`; absent: none (the
   * injected proxies then run unconfigured)
   */
  meshConfig?: { host: string; port: number; url: string };
  /**
   * the mesh ingress gateway (deploy/mesh-ingress.yaml): its ServiceAccount in `namespace` (its
   * identity; only its token gets /v1/ingress) and the routes it serves (STRAIT_MESH_INGRESS)
   */
  ingress?: { serviceAccount: string; routes: IngressRouteSpec[] };
  /** the clusterset.local DNS server (UDP and TCP), started once the cluster has joined; absent: none */
  dns?: { host: string; port: number };
  /** how often to look for the join and retry the caBundle patch, ms */
  retryMs?: number;
  /** how often a written caBundle is checked again (a re-applied or recreated configuration loses it), ms; default 30 s */
  recheckMs?: number;
}

export interface KubernetesControl {
  webhook: SidecarInjector;
  mesh: MeshController;
  meshConfig: MeshConfigServer | undefined;
  /** the clusterset.local DNS server, once the cluster has joined */
  readonly dns: ClustersetDns | undefined;
  /** what readiness still waits for (the webhook's caBundle): empty once pods created now get their sidecar */
  pending(): readonly string[];
  close(): Promise<void>;
}

// the abort listener goes with its timer: one left behind per retry piled up on the signal
// (MaxListenersExceededWarning after 11 retries, e.g. while waiting for the join)
const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((r) => {
  const done = (): void => { clearTimeout(t); signal.removeEventListener('abort', done); r(); };
  const t = setTimeout(done, ms);
  signal.addEventListener('abort', done, { once: true });
});

/** Retry `step` until it returns true or the signal aborts; errors are logged once per kind. */
async function until(what: string, step: () => Promise<boolean>, ms: number, signal: AbortSignal, log: Logger): Promise<void> {
  let last = '';
  while (!signal.aborted) {
    try {
      if (await step()) return;
    } catch (err) {
      const text = isStraitError(err) ? err.code : String(err);
      if (text !== last) log.warn({ err: isStraitError(err) ? err.message : String(err) }, `${what}: retrying`);
      last = text;
    }
    await sleep(ms, signal);
  }
}

export async function startKubernetesControl(o: KubernetesControlOptions): Promise<KubernetesControl> {
  const { store, log, registry } = o;
  const retryMs = o.retryMs ?? 2000;
  const abort = new AbortController();
  const tasks: Promise<void>[] = [];

  // mesh CA and policy
  const ca = await loadOrCreateCaInStore(store, o.namespace);
  const meshDir = join(o.stateDir, 'mesh');
  mkdirSync(meshDir, { recursive: true, mode: 0o755 });
  let meshConfig: MeshConfigServer | undefined;
  // observed traffic: the injected proxies report their inbound flows to the configuration
  // service; one MeshTrafficObservation per pod (written at most every 10 s), as the local
  // world's mesh agent writes them. Until the stored ones can be read (the CRD and the RBAC of
  // deploy/ applied), reports are answered 503 and the proxies keep them.
  let observations: ObservationWriter | undefined;
  let lastView: Parameters<ObservationWriter['update']>[0] | undefined;
  if (o.meshConfig) {
    const observeLog = log.child({ part: 'observe' });
    const first = new ObservationWriter({ store, requireNetns: false, minWriteIntervalMs: 10_000, log: observeLog });
    const startObserving = async (w: ObservationWriter): Promise<boolean> => {
      await w.start();
      observations = w;
      if (lastView) w.update(lastView);
      return true;
    };
    try {
      await startObserving(first);
    } catch (err) {
      first.stop();
      log.warn({ err: isStraitError(err) ? err.message : String(err) }, 'observed traffic: cannot read MeshTrafficObservations (deploy/crds.yaml and the RBAC of deploy/rbac/control.yaml applied?); retrying');
      tasks.push(until('reading MeshTrafficObservations', () => {
        const w = new ObservationWriter({ store, requireNetns: false, minWriteIntervalMs: 10_000, log: observeLog });
        return startObserving(w).catch((e: unknown) => { w.stop(); throw e; });
      }, retryMs * 5, abort.signal, log));
    }
  }
  const mesh = new MeshController({
    store, ca, dir: meshDir, log: log.child({ part: 'mesh' }),
    onReconciled: (r) => { meshConfig?.notify(); lastView = r.view; observations?.update(r.view); },
    ...(o.ingress ? { ingress: { namespace: o.namespace, serviceAccount: o.ingress.serviceAccount, routes: o.ingress.routes } } : {}),
  });
  await mesh.start();
  let serving: CertRotator | undefined;
  if (o.meshConfig) {
    // its certificate chains to the mesh root, which every member namespace has (istio-ca-root-cert)
    const hosts = [...serviceHosts(o.webhook.service, o.namespace), ...o.webhook.extraHosts];
    serving = new CertRotator({
      ca, namespace: o.namespace, serviceAccount: o.webhook.service, issue: { dnsNames: hosts, lifetimeMs: 30 * 24 * 3600_000 },
      // the first one is served below; later ones replace it
      onRotate: (c) => meshConfig?.setCertificate(c.chainPem, c.keyPem),
      onError: (err) => log.warn({ err: String(err) }, 'mesh configuration service: certificate rotation failed; retrying'),
    });
    const cert = await serving.start();
    const reviews = new Counter({ name: 'strait_control_mesh_config_requests_total', help: 'requests to the mesh configuration service, by outcome', labelNames: ['outcome'], registers: [registry] });
    meshConfig = await serveMeshConfig({
      cert: cert.chainPem, key: cert.keyPem, host: o.meshConfig.host, port: o.meshConfig.port,
      authenticate: tokenReviewer(store, log),
      podConfig: (ns, pod) => mesh.podConfig(ns, pod),
      ...(o.ingress ? { ingress: { namespace: o.namespace, serviceAccount: o.ingress.serviceAccount, config: () => mesh.ingressConfig() } } : {}),
      onFlows: (ns: string, pod: string, report: Record<string, unknown>) => {
        if (!observations) return false;
        observations.report(`${ns}/${pod}`, report);
        return true;
      },
      onRequest: (outcome) => reviews.inc({ outcome }),
    });
    log.info({ port: meshConfig.port, url: o.meshConfig.url }, 'mesh configuration service serving');
  }
  new Counter({
    name: 'strait_control_mesh_reconciles_total', help: 'reconcile passes of the mesh controller (certificates, root ConfigMaps, policy)', registers: [registry],
    collect(this: Counter<string>) { this.reset(); this.inc(mesh.reconciles); },
  });

  // sidecar-injection webhook
  const reviews = new Counter({ name: 'strait_control_webhook_reviews_total', help: 'AdmissionReviews answered by the sidecar injector, by outcome', labelNames: ['outcome'], registers: [registry] });
  const tls = createWebhookTls([...serviceHosts(o.webhook.service, o.namespace), ...o.webhook.extraHosts]);
  const image = await sidecarImage(store, o, log);
  const webhook = await serveSidecarInjector({
    cert: tls.certPem, key: tls.keyPem, image, host: o.webhook.host, port: o.webhook.port,
    ...(o.meshConfig ? { control: o.meshConfig.url } : {}),
    inMesh: (ns) => mesh.isMember(ns),
    onReview: (outcome) => reviews.inc({ outcome }),
  });
  // not ready until the API server trusts this webhook's certificate: a pod made before that
  // gets no sidecar (failurePolicy Ignore), so the readiness probe waits for it; checked again
  // every recheckMs (a configuration re-applied or recreated without it is patched again, and
  // the pod is not ready meanwhile)
  let caBundleWritten = false;
  const configName = o.webhook.configName;
  if (configName !== undefined) {
    tasks.push((async () => {
      let last = '';
      while (!abort.signal.aborted) {
        try {
          if (!(await webhookCaBundleCurrent(store, configName, tls.caPem))) {
            caBundleWritten = false;
            const n = await patchWebhookCaBundle(store, configName, tls.caPem);
            if (n === 0) throw E.configInvalid('MutatingWebhookConfiguration', configName, 'at least one webhook (it has none: nothing would call the sidecar injector)');
            log.info({ config: configName, webhooks: n }, 'webhook caBundle written');
          }
          caBundleWritten = true;
          last = '';
        } catch (err) {
          caBundleWritten = false;
          const text = isStraitError(err) ? err.code : String(err);
          if (text !== last) log.warn({ err: isStraitError(err) ? err.message : String(err) }, 'patching the webhook caBundle: retrying');
          last = text;
        }
        await sleep(caBundleWritten ? (o.recheckMs ?? 30_000) : retryMs, abort.signal);
      }
    })());
  }

  // export/import sync and the clusterset.local DNS server, once this cluster has joined a
  // broker, following the join as the local world's multicluster daemon does (polled: the
  // join's Role gives this process get only)
  const multicluster = runMulticluster({
    local: store, registry, log: log.child({ part: 'multicluster' }), resyncMs: 10_000,
    join: { watch: false, pollMs: retryMs, backoff: { initialMs: retryMs, maxMs: retryMs } }, ...(o.dns ? { dns: o.dns } : {}),
  });

  return {
    webhook, mesh, meshConfig,
    get dns() { return multicluster.dns; },
    pending: () => (caBundleWritten || configName === undefined ? [] : [`the caBundle of MutatingWebhookConfiguration ${configName}`]),
    async close() {
      abort.abort();
      await Promise.all(tasks);
      await multicluster.stop();
      mesh.stop();
      observations?.stop();
      serving?.stop();
      await meshConfig?.close();
      await webhook.close();
    },
  };
}

/** The image of the injected containers: the one this pod runs (a kustomize image override applies to both), else the default. */
async function sidecarImage(store: KubernetesResourceStore, o: KubernetesControlOptions, log: Logger): Promise<string> {
  const name = o.webhook.imageFromPod;
  if (!name) return o.webhook.image;
  try {
    const pod = await store.get<KubeObject<{ containers?: { name?: string; image?: string }[] }>>({ apiVersion: 'v1', kind: 'Pod' }, name, o.namespace);
    const cs = pod?.spec?.containers ?? [];
    const image = (cs.find((c) => c.name === 'control') ?? cs[0])?.image;
    if (image) {
      log.info({ image }, 'injected containers run this pod\'s image');
      return image;
    }
  } catch (err) {
    log.warn({ err: isStraitError(err) ? err.message : String(err), pod: name }, 'cannot read this pod\'s image; the injected containers run the default');
  }
  return o.webhook.image;
}

/**
 * Who a bearer token belongs to, by a TokenReview with the audience `strait` (a projected token
 * made for the mesh; the pod's default token is not accepted); answers cached for 60 s.
 */
export function tokenReviewer(store: KubernetesResourceStore, log: Logger): (token: string) => Promise<MeshCaller | undefined> {
  const cache = new Map<string, { caller: MeshCaller | undefined; until: number }>();
  return async (token) => {
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.caller;
    let caller: MeshCaller | undefined;
    try {
      const r = await store.raw({
        method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences: [TOKEN_AUDIENCE] } },
      });
      const st = (r.body as { status?: { authenticated?: boolean; audiences?: string[]; user?: { username?: string; extra?: Record<string, string[]> } } }).status;
      const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(st?.user?.username ?? '');
      if (st?.authenticated === true && m && (st.audiences ?? []).includes(TOKEN_AUDIENCE)) {
        const pod = st.user?.extra?.['authentication.kubernetes.io/pod-name']?.[0];
        caller = { namespace: m[1] as string, serviceAccount: m[2] as string, ...(pod ? { pod } : {}) };
      }
    } catch (err) {
      // the API server could not say: no answer is cached, the caller retries
      log.warn({ err: isStraitError(err) ? err.message : String(err) }, 'TokenReview failed');
      return undefined;
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(key, { caller, until: Date.now() + 60_000 });
    return caller;
  };
}

/**
 * The mesh configuration service from the environment deploy/control.yaml sets:
 * STRAIT_MESH_CONFIG_PORT (default 15012; "off": none), STRAIT_MESH_CONFIG_LISTEN (default
 * 0.0.0.0), STRAIT_MESH_CONFIG_URL (what the injected proxies are given; default
 * https://<STRAIT_WEBHOOK_SERVICE>.<namespace>.svc:<port>, the Service's port 15012).
 */
export function meshConfigSettingsFromEnv(env: NodeJS.ProcessEnv, namespace: string): KubernetesControlOptions['meshConfig'] {
  const port = env['STRAIT_MESH_CONFIG_PORT'] ?? '15012';
  if (port === 'off') return undefined;
  const n = Number(port);
  if (!/^[0-9]{1,5}$/.test(port) || n > 65535) throw E.configInvalid('STRAIT_MESH_CONFIG_PORT', port, 'a port number 0-65535, or "off"');
  const url = env['STRAIT_MESH_CONFIG_URL'] ?? `https://${env['STRAIT_WEBHOOK_SERVICE'] ?? 'strait-control'}.${namespace}.svc:${n === 0 ? 15012 : n}`;
  if (!/^https:\/\/[^/]+$/.test(url)) throw E.configInvalid('STRAIT_MESH_CONFIG_URL', url, 'https://HOST:PORT');
  return { host: env['STRAIT_MESH_CONFIG_LISTEN'] ?? '0.0.0.0', port: n, url };
}

/**
 * The mesh ingress gateway from the environment: STRAIT_MESH_INGRESS, a JSON list of routes
 * [{pathPrefix, namespace, service, port}] (default none: the gateway answers 404), and
 * STRAIT_MESH_INGRESS_SERVICE_ACCOUNT (default strait-mesh-ingress, deploy/mesh-ingress.yaml's).
 */
export function ingressSettingsFromEnv(env: NodeJS.ProcessEnv): KubernetesControlOptions['ingress'] {
  const text = env['STRAIT_MESH_INGRESS'] ?? '[]';
  const bad = (why: string): never => { throw E.configInvalid('STRAIT_MESH_INGRESS', text, why); };
  let routes: unknown;
  try {
    routes = JSON.parse(text);
  } catch {
    return bad('a JSON list of routes [{"pathPrefix":"/","namespace":"NS","service":"NAME","port":8080}]');
  }
  if (!Array.isArray(routes)) return bad('a JSON list of routes');
  for (const r of routes as Record<string, unknown>[]) {
    if (typeof r !== 'object' || r === null) return bad('every route is an object');
    if (typeof r['pathPrefix'] !== 'string' || !r['pathPrefix'].startsWith('/')) bad('every route has a pathPrefix starting with "/"');
    for (const k of ['namespace', 'service']) if (typeof r[k] !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(r[k] as string)) bad(`every route has a ${k} (a DNS label)`);
    if (!Number.isInteger(r['port']) || (r['port'] as number) < 1 || (r['port'] as number) > 65535) bad('every route has a port 1-65535');
    for (const k of Object.keys(r)) if (!['pathPrefix', 'namespace', 'service', 'port', 'host'].includes(k)) bad(`unknown key ${JSON.stringify(k)} in a route`);
  }
  return { serviceAccount: env['STRAIT_MESH_INGRESS_SERVICE_ACCOUNT'] ?? 'strait-mesh-ingress', routes: routes as IngressRouteSpec[] };
}

/** STRAIT_WEBHOOK_RECHECK_SECONDS: how often a written caBundle is checked again (default 30). */
export function webhookRecheckMsFromEnv(env: NodeJS.ProcessEnv): number {
  const text = env['STRAIT_WEBHOOK_RECHECK_SECONDS'] ?? '30';
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1) throw E.configInvalid('STRAIT_WEBHOOK_RECHECK_SECONDS', text, 'whole seconds, 1 or more');
  return Number(text) * 1000;
}

/** The Kubernetes-mode settings from the environment deploy/control.yaml sets. */
export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv): KubernetesControlOptions['webhook'] {
  const listen = env['STRAIT_WEBHOOK_LISTEN'] ?? '0.0.0.0';
  return {
    host: listen,
    port: Number(env['STRAIT_WEBHOOK_PORT'] ?? 9443),
    // "off": this process writes no caBundle (injection configured another way, e.g. cert-manager's CA injector)
    configName: env['STRAIT_WEBHOOK_CONFIG'] === 'off' ? undefined : env['STRAIT_WEBHOOK_CONFIG'] ?? 'strait-sidecar-injector',
    service: env['STRAIT_WEBHOOK_SERVICE'] ?? 'strait-control',
    extraHosts: (env['STRAIT_WEBHOOK_HOSTS'] ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    image: env['STRAIT_SIDECAR_IMAGE'] ?? imageOfThisPod(),
    ...(env['STRAIT_SIDECAR_IMAGE'] === undefined && env['STRAIT_POD_NAME'] ? { imageFromPod: env['STRAIT_POD_NAME'] } : {}),
  };
}

/**
 * The clusterset.local DNS listener from the environment deploy/control.yaml sets:
 * STRAIT_DNS_PORT (default 5353, above 1023: the process has no capabilities; "off": none),
 * STRAIT_DNS_LISTEN (default 0.0.0.0).
 */
export function dnsSettingsFromEnv(env: NodeJS.ProcessEnv): KubernetesControlOptions['dns'] {
  const port = env['STRAIT_DNS_PORT'] ?? '5353';
  if (port === 'off') return undefined;
  const n = Number(port);
  if (!/^[0-9]{1,5}$/.test(port) || n > 65535) throw E.configInvalid('STRAIT_DNS_PORT', port, 'a port number 0-65535, or "off"');
  return { host: env['STRAIT_DNS_LISTEN'] ?? '0.0.0.0', port: n };
}

/** The image the control module runs from (the sidecar uses the same one): strait:<version>. */
function imageOfThisPod(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return `strait:${pkg.version ?? 'latest'}`;
  } catch {
    return 'strait:latest';
  }
}
