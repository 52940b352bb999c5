// The GitOps part of the control module as one unit: admin Secret, key store,
// controller and HTTP API. daemon/control/main.ts and `strait up` start it.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { silentLogger } from '../../base/log/index.js';
import type { ResourceStore } from '../../platform/store/index.js';
import { ensureAdminSecret } from './admin.js';
import { startApiServer, type ApiMount, type ApiServer } from './api-server.js';
import { GitOpsController } from './controller.js';
import { ensureDefaultProject } from './default-project.js';
import { loginLimitsFromEnv, type LoginLimits } from './login-limiter.js';
import { createGitOpsMetrics } from './metrics.js';
import { ensureServingCertificate } from './tls.js';
import { readWebhookSecrets } from './webhook-auth.js';

export interface GitOpsServiceOptions {
  store: ResourceStore;
  namespace?: string;
  stateDir: string;
  destinations?: (server: string) => ResourceStore | undefined;
  pollIntervalMs?: number;
  /** API listener; port 0 picks one (tests) */
  host?: string;
  port?: number;
  /** false: plain HTTP; true: a self-signed certificate kept in the admin Secret; or PEMs */
  tls?: boolean | { cert: string; key: string };
  registry?: Registry;
  log?: Logger;
  /** where to write the generated admin password at first start (mode 0600); default: nowhere */
  initialPasswordFile?: string;
  /** failed-login limits; default: Argo CD's environment variables (login-limiter.ts) or 5 in 300 s */
  loginLimits?: LoginLimits;
  /** more handlers on the API's port behind its session (the web console) */
  mounts?: ApiMount[];
}

export interface GitOpsService {
  controller: GitOpsController;
  api: ApiServer;
  close(): Promise<void>;
}

export async function startGitOpsService(opts: GitOpsServiceOptions): Promise<GitOpsService> {
  const namespace = opts.namespace ?? 'argocd';
  const log = opts.log ?? silentLogger();
  // as an Argo CD install makes it: `strait get ns` lists it (in Kubernetes it exists already)
  if (!(await opts.store.get({ apiVersion: 'v1', kind: 'Namespace' }, namespace))) {
    await opts.store.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { fieldManager: 'strait-control' });
  }
  // as Argo CD's API server does at start (`argocd proj get default`); an existing one is kept as it is.
  // Not fatal: where the store refuses the write (Kubernetes RBAC without create on appprojects) the
  // controller runs without it, as before, and says so
  await ensureDefaultProject(opts.store, namespace).catch((err: unknown) => {
    log.warn({ err, namespace }, 'could not create the default AppProject; Applications without a project are refused until one exists');
  });
  const loginLimits = opts.loginLimits ?? loginLimitsFromEnv();
  const account = await ensureAdminSecret(opts.store, namespace, opts.initialPasswordFile ? { initialPasswordFile: opts.initialPasswordFile } : {});
  const controller = new GitOpsController({
    store: opts.store,
    namespace,
    stateDir: opts.stateDir,
    log,
    ...(opts.destinations ? { destinations: opts.destinations } : {}),
    ...(opts.pollIntervalMs ? { pollIntervalMs: opts.pollIntervalMs } : {}),
    metrics: createGitOpsMetrics(opts.registry),
  });
  await controller.start();
  const host = opts.host ?? '127.0.0.1';
  const tls = opts.tls === true ? await ensureServingCertificate(opts.store, namespace, [host, '127.0.0.1', 'localhost']) : opts.tls || undefined;
  const api = await startApiServer({
    controller,
    account,
    host,
    port: opts.port ?? 8080,
    log,
    ...(tls ? { tls } : {}),
    webhookSecrets: () => readWebhookSecrets(opts.store, namespace),
    loginLimits,
    ...(opts.mounts ? { mounts: opts.mounts } : {}),
  });
  log.info({ url: api.url, namespace }, 'GitOps API listening');
  return {
    controller,
    api,
    async close() {
      await api.close();
      await controller.stop();
    },
  };
}
