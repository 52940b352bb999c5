// The Kubernetes ResourceStore (one door). @kubernetes/client-node is loaded only when a
// store is opened. Usage:
//   const store = openKubernetesStore({ kubeConfigPath: '~/.kube/config', context: 'prod' });
//   const store = openKubernetesStore({ kubeconfig: yamlText });
//   const store = openKubernetesStore({});   // $KUBECONFIG, ~/.kube/config, or in-cluster
import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { E, isStraitError } from '../../../base/errors/index.js';
import { KubeHttp, LazyHttp } from './http.js';
import { inClusterConfig, SERVICE_ACCOUNT_DIR, type KubeConfigLike } from '../../kube-preload/index.js';
import { KubernetesStore, type KubernetesResourceStore, type RawRequest, type ServerSideApplyOptions } from './store.js';
export { buildCrds, crdFor, type SpecSchemas } from './crds.js';

export type { KubernetesResourceStore, RawRequest, ServerSideApplyOptions };

export interface KubernetesStoreOptions {
  /** kubeconfig YAML text, or a loaded KubeConfig */
  kubeconfig?: string | KubeConfig;
  /** path to a kubeconfig file */
  kubeConfigPath?: string;
  /** context to use instead of the kubeconfig's current-context */
  context?: string;
  /** seconds one watch request stays open before it is resumed (default 300) */
  watchTimeoutSeconds?: number;
  /** a request whose connection stays silent this long fails with STRAIT_ERR_STORE_UNAVAILABLE (default 30 s) */
  requestTimeoutMs?: number;
}

const isKubeConfig = (v: unknown): v is KubeConfig => typeof v === 'object' && v !== null && typeof (v as KubeConfig).getCurrentCluster === 'function';

/**
 * Load a KubeConfig the way kubectl does; STRAIT_ERR_KUBE_CONFIG when it cannot be used. A pod's
 * own in-cluster configuration, with nothing given, is read without client-node (in-cluster.ts).
 */
export async function loadKubeConfig(
  opts: KubernetesStoreOptions,
  env: NodeJS.ProcessEnv = process.env,
  serviceAccountDir = SERVICE_ACCOUNT_DIR,
): Promise<{ kc: KubeConfigLike; source: string }> {
  if (opts.kubeconfig === undefined && opts.kubeConfigPath === undefined && opts.context === undefined) {
    const inCluster = inClusterConfig(env, serviceAccountDir);
    if (inCluster) return { kc: inCluster, source: '(in-cluster)' };
  }
  const { KubeConfig: KubeConfigClass } = await import('@kubernetes/client-node');
  const kc = new KubeConfigClass();
  let source: string;
  try {
    if (isKubeConfig(opts.kubeconfig)) {
      source = '(given KubeConfig)';
      kc.mergeConfig(opts.kubeconfig);
      kc.setCurrentContext(opts.kubeconfig.getCurrentContext());
    } else if (typeof opts.kubeconfig === 'string') {
      source = '(given kubeconfig text)';
      kc.loadFromString(opts.kubeconfig);
    } else if (opts.kubeConfigPath !== undefined) {
      source = opts.kubeConfigPath;
      if (!existsSync(source)) throw E.kubeconfigInvalid(source, 'the file does not exist');
      kc.loadFromFile(source);
    } else {
      source = process.env['KUBECONFIG'] ?? '(default: ~/.kube/config or in-cluster)';
      kc.loadFromDefault();
    }
  } catch (e) {
    if (isStraitError(e)) throw e;
    throw E.kubeconfigInvalid(opts.kubeConfigPath ?? '(kubeconfig)', (e as Error).message);
  }
  if (opts.context !== undefined) {
    if (!kc.getContextObject(opts.context)) {
      throw E.kubeconfigInvalid(
        source,
        `it has no context ${JSON.stringify(opts.context)} (contexts: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    }
    kc.setCurrentContext(opts.context);
  }
  return { kc, source };
}

/**
 * Open a ResourceStore on a Kubernetes API server. Returns at once; the kubeconfig is
 * read in the background and a problem with it (STRAIT_ERR_KUBE_CONFIG) is what the
 * first call rejects with.
 */
export function openKubernetesStore(opts: KubernetesStoreOptions = {}): KubernetesResourceStore {
  const source = opts.kubeConfigPath ?? (opts.kubeconfig === undefined ? (process.env['KUBECONFIG'] ?? '(default kubeconfig)') : '(given kubeconfig)');
  const ready = loadKubeConfig(opts).then(({ kc, source: s }) => new KubeHttp(kc, s, opts.requestTimeoutMs ?? 30_000));
  return new KubernetesStore(new LazyHttp(ready, source), opts.watchTimeoutSeconds ?? 300);
}
