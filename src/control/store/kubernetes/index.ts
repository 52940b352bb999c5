// The Kubernetes ResourceStore (one door). Usage:
//   const store = openKubernetesStore({ kubeConfigPath: '~/.kube/config', context: 'prod' });
//   const store = openKubernetesStore({ kubeconfig: yamlText });
//   const store = openKubernetesStore({});   // $KUBECONFIG, ~/.kube/config, or in-cluster
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { E } from '../../../base/errors/index.js';
import { KubeHttp } from './http.js';
export { buildCrds, crdFor, type SpecSchemas } from './crds.js';
import { KubernetesStore, type KubernetesResourceStore, type ServerSideApplyOptions } from './store.js';

export type { KubernetesResourceStore, ServerSideApplyOptions };

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

/** Load a KubeConfig the way kubectl does; STRAIT_ERR_KUBE_CONFIG when it cannot be used. */
export function loadKubeConfig(opts: KubernetesStoreOptions): { kc: KubeConfig; source: string } {
  const kc = new KubeConfig();
  let source: string;
  try {
    if (opts.kubeconfig instanceof KubeConfig) {
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
    if (e instanceof Error && 'code' in e && String((e as { code: unknown }).code).startsWith('STRAIT_ERR_')) throw e;
    throw E.kubeconfigInvalid(opts.kubeConfigPath ?? '(kubeconfig)', (e as Error).message);
  }
  if (opts.context !== undefined) {
    if (!kc.getContextObject(opts.context)) {
      throw E.kubeconfigInvalid(source, `it has no context ${JSON.stringify(opts.context)} (contexts: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kc.setCurrentContext(opts.context);
  }
  return { kc, source };
}

/** Open a ResourceStore on a Kubernetes API server. */
export function openKubernetesStore(opts: KubernetesStoreOptions = {}): KubernetesResourceStore {
  const { kc, source } = loadKubeConfig(opts);
  return new KubernetesStore(new KubeHttp(kc, source, opts.requestTimeoutMs ?? 30_000), opts.watchTimeoutSeconds ?? 300);
}
