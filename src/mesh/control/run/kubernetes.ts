// The mesh of the control module in Kubernetes mode (deploy/control.yaml): the mesh controller
// (the root CA kept in Secret strait-mesh-ca, workload certificates, istio-ca-root-cert in
// member namespaces, generated policy), the mesh configuration service the injected proxies
// follow (TLS, a certificate from the mesh CA), the observed traffic they report, and the
// sidecar-injection webhook (webhook.ts).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { isStraitError } from '../../../base/errors/index.js';
import type { KubernetesResourceStore } from '../../../platform/store/index.js';
import { CertRotator, loadOrCreateCaInStore, type MeshCa } from '../ca/index.js';
import { serveMeshConfig, type MeshConfigServer } from '../config-server/index.js';
import { MeshController, type IngressRouteSpec } from '../controller/index.js';
import { ObservationWriter } from '../observe/index.js';
import { serviceHosts, type SidecarInjector } from '../sidecar-injector/index.js';
import { until } from './retry.js';
import { tokenReviewer } from './token-review.js';
import { startWebhook } from './webhook.js';

export interface MeshKubernetesOptions {
  store: KubernetesResourceStore;
  /** the control module's namespace (mesh CA Secret, webhook Service) */
  namespace: string;
  stateDir: string;
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
  /** how often to retry the caBundle patch (and reading the observations, 5 times this), ms */
  retryMs?: number;
  /** how often a written caBundle is checked again (a re-applied or recreated configuration loses it), ms; default 30 s */
  recheckMs?: number;
}

export interface MeshKubernetes {
  webhook: SidecarInjector;
  mesh: MeshController;
  meshConfig: MeshConfigServer | undefined;
  /** what readiness still waits for (the webhook's caBundle): empty once pods created now get their sidecar */
  pending(): readonly string[];
  close(): Promise<void>;
}

type View = Parameters<ObservationWriter['update']>[0];

/**
 * Observed traffic: the injected proxies report their inbound flows to the configuration
 * service; one MeshTrafficObservation per pod (written at most every 10 s), as the local
 * world's mesh agent writes them. Until the stored ones can be read (the CRD and the RBAC of
 * deploy/ applied), reports are answered 503 and the proxies keep them.
 */
async function startObservations(
  o: MeshKubernetesOptions,
  signal: AbortSignal,
  tasks: Promise<void>[],
): Promise<{ writer(): ObservationWriter | undefined; update(v: View): void }> {
  const observeLog = o.log.child({ part: 'observe' });
  let writer: ObservationWriter | undefined;
  let lastView: View | undefined;
  const attempt = async (): Promise<boolean> => {
    const w = new ObservationWriter({ store: o.store, requireNetns: false, minWriteIntervalMs: 10_000, log: observeLog });
    try {
      await w.start();
    } catch (err) {
      w.stop();
      throw err;
    }
    writer = w;
    if (lastView) w.update(lastView);
    return true;
  };
  await attempt().catch((err: unknown) => {
    o.log.warn(
      { err: isStraitError(err) ? err.message : String(err) },
      'observed traffic: cannot read MeshTrafficObservations (deploy/crds.yaml and the RBAC of deploy/rbac/control.yaml applied?); retrying',
    );
    tasks.push(until('reading MeshTrafficObservations', attempt, (o.retryMs ?? 2000) * 5, signal, o.log));
  });
  return {
    writer: () => writer,
    update: (v) => {
      lastView = v;
      writer?.update(v);
    },
  };
}

/** The mesh configuration service: its certificate chains to the mesh root, which every member namespace has (istio-ca-root-cert). */
async function startConfigService(
  o: MeshKubernetesOptions,
  c: NonNullable<MeshKubernetesOptions['meshConfig']>,
  ca: MeshCa,
  mesh: MeshController,
  registry: Registry,
  observations: () => ObservationWriter | undefined,
): Promise<{ server: MeshConfigServer; rotator: CertRotator }> {
  const hosts = [...serviceHosts(o.webhook.service, o.namespace), ...o.webhook.extraHosts];
  const serving: { server?: MeshConfigServer } = {};
  const rotator = new CertRotator({
    ca,
    namespace: o.namespace,
    serviceAccount: o.webhook.service,
    issue: { dnsNames: hosts, lifetimeMs: 30 * 24 * 3600_000 },
    // the first one is served below; later ones replace it
    onRotate: (cert) => serving.server?.setCertificate(cert.chainPem, cert.keyPem),
    onError: (err) => o.log.warn({ err: String(err) }, 'mesh configuration service: certificate rotation failed; retrying'),
  });
  const cert = await rotator.start();
  const requests = new Counter({
    name: 'strait_control_mesh_config_requests_total',
    help: 'requests to the mesh configuration service, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const server = await serveMeshConfig({
    cert: cert.chainPem,
    key: cert.keyPem,
    host: c.host,
    port: c.port,
    authenticate: tokenReviewer(o.store, o.log),
    podConfig: (ns, pod) => mesh.podConfig(ns, pod),
    ...(o.ingress ? { ingress: { namespace: o.namespace, serviceAccount: o.ingress.serviceAccount, config: () => mesh.ingressConfig() } } : {}),
    onFlows: (ns: string, pod: string, report: Record<string, unknown>) => {
      const w = observations();
      if (!w) return false;
      w.report(`${ns}/${pod}`, report);
      return true;
    },
    onRequest: (outcome) => requests.inc({ outcome }),
  });
  serving.server = server;
  o.log.info({ port: server.port, url: c.url }, 'mesh configuration service serving');
  return { server, rotator };
}

export async function runMeshKubernetes(o: MeshKubernetesOptions, registry: Registry): Promise<MeshKubernetes> {
  const abort = new AbortController();
  const tasks: Promise<void>[] = [];
  const ca = await loadOrCreateCaInStore(o.store, o.namespace);
  const meshDir = join(o.stateDir, 'mesh');
  mkdirSync(meshDir, { recursive: true, mode: 0o755 });
  const observations = o.meshConfig ? await startObservations(o, abort.signal, tasks) : undefined;
  let config: { server: MeshConfigServer; rotator: CertRotator } | undefined;
  const mesh = new MeshController({
    store: o.store,
    ca,
    dir: meshDir,
    log: o.log.child({ part: 'mesh' }),
    onReconciled: (r) => {
      config?.server.notify();
      observations?.update(r.view);
    },
    ...(o.ingress ? { ingress: { namespace: o.namespace, serviceAccount: o.ingress.serviceAccount, routes: o.ingress.routes } } : {}),
  });
  await mesh.start();
  if (o.meshConfig && observations) config = await startConfigService(o, o.meshConfig, ca, mesh, registry, observations.writer);
  new Counter({
    name: 'strait_control_mesh_reconciles_total',
    help: 'reconcile passes of the mesh controller (certificates, root ConfigMaps, policy)',
    registers: [registry],
    collect(this: Counter<string>) {
      this.reset();
      this.inc(mesh.reconciles);
    },
  });
  const webhook = await startWebhook(o, mesh, registry, abort.signal);
  tasks.push(webhook.task);
  const configName = o.webhook.configName;
  return {
    webhook: webhook.injector,
    mesh,
    meshConfig: config?.server,
    pending: () => (webhook.caBundleWritten() ? [] : [`the caBundle of MutatingWebhookConfiguration ${configName}`]),
    async close() {
      abort.abort();
      await Promise.all(tasks);
      mesh.stop();
      observations?.writer()?.stop();
      config?.rotator.stop();
      await config?.server.close();
      await webhook.injector.close();
    },
  };
}
