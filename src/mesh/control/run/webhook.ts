// The sidecar-injection webhook of Kubernetes mode, on 9443, with a serving certificate it
// makes itself and writes into the caBundle of its MutatingWebhookConfiguration. Not ready
// until the API server trusts that certificate: a pod made before that gets no sidecar
// (failurePolicy Ignore), so the readiness probe waits for it; checked again every
// recheckMs (a configuration re-applied or recreated without it is patched again, and the
// pod is not ready meanwhile).
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { E, isStraitError } from '../../../base/errors/index.js';
import type { KubeObject, KubernetesResourceStore } from '../../../platform/store/index.js';
import type { MeshController } from '../controller/index.js';
import {
  createWebhookTls,
  patchWebhookCaBundle,
  serveSidecarInjector,
  serviceHosts,
  webhookCaBundleCurrent,
  type SidecarInjector,
} from '../sidecar-injector/index.js';
import type { MeshKubernetesOptions } from './kubernetes.js';
import { sleep } from './retry.js';

export interface Webhook {
  injector: SidecarInjector;
  /** the caBundle is written (always true without a configuration to write it to) */
  caBundleWritten(): boolean;
  /** the caBundle loop, ended by the signal */
  task: Promise<void>;
}

/** The image of the injected containers: the one this pod runs (a kustomize image override applies to both), else the default. */
async function sidecarImage(store: KubernetesResourceStore, o: MeshKubernetesOptions, log: Logger): Promise<string> {
  const name = o.webhook.imageFromPod;
  if (!name) return o.webhook.image;
  try {
    const pod = await store.get<KubeObject<{ containers?: { name?: string; image?: string }[] }>>({ apiVersion: 'v1', kind: 'Pod' }, name, o.namespace);
    const cs = pod?.spec?.containers ?? [];
    const image = (cs.find((c) => c.name === 'control') ?? cs[0])?.image;
    if (image) {
      log.info({ image }, "injected containers run this pod's image");
      return image;
    }
  } catch (err) {
    log.warn({ err: isStraitError(err) ? err.message : String(err), pod: name }, "cannot read this pod's image; the injected containers run the default");
  }
  return o.webhook.image;
}

/** Keep the webhook's caBundle written until the signal aborts. */
async function keepCaBundle(o: MeshKubernetesOptions, configName: string, caPem: string, state: { written: boolean }, signal: AbortSignal): Promise<void> {
  let last = '';
  while (!signal.aborted) {
    try {
      if (!(await webhookCaBundleCurrent(o.store, configName, caPem))) {
        state.written = false;
        const n = await patchWebhookCaBundle(o.store, configName, caPem);
        if (n === 0)
          throw E.configInvalid('MutatingWebhookConfiguration', configName, 'at least one webhook (it has none: nothing would call the sidecar injector)');
        o.log.info({ config: configName, webhooks: n }, 'webhook caBundle written');
      }
      state.written = true;
      last = '';
    } catch (err) {
      state.written = false;
      const text = isStraitError(err) ? err.code : String(err);
      if (text !== last) o.log.warn({ err: isStraitError(err) ? err.message : String(err) }, 'patching the webhook caBundle: retrying');
      last = text;
    }
    await sleep(state.written ? (o.recheckMs ?? 30_000) : (o.retryMs ?? 2000), signal);
  }
}

export async function startWebhook(o: MeshKubernetesOptions, mesh: MeshController, registry: Registry, signal: AbortSignal): Promise<Webhook> {
  const reviews = new Counter({
    name: 'strait_control_webhook_reviews_total',
    help: 'AdmissionReviews answered by the sidecar injector, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const tls = createWebhookTls([...serviceHosts(o.webhook.service, o.namespace), ...o.webhook.extraHosts]);
  const image = await sidecarImage(o.store, o, o.log);
  const injector = await serveSidecarInjector({
    cert: tls.certPem,
    key: tls.keyPem,
    image,
    host: o.webhook.host,
    port: o.webhook.port,
    ...(o.meshConfig ? { control: o.meshConfig.url } : {}),
    inMesh: (ns) => mesh.isMember(ns),
    onReview: (outcome) => reviews.inc({ outcome }),
  });
  const configName = o.webhook.configName;
  const state = { written: false };
  const task = configName === undefined ? Promise.resolve() : keepCaBundle(o, configName, tls.caPem, state, signal);
  return { injector, caBundleWritten: () => configName === undefined || state.written, task };
}
