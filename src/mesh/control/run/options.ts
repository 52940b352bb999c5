// What the mesh of the control module in Kubernetes mode runs with (kubernetes.ts), read from
// the environment by env.ts.
import type { Logger } from 'pino';
import type { KubernetesResourceStore } from '../../../platform/store/index.js';
import type { IngressRouteSpec } from '../controller/index.js';

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
