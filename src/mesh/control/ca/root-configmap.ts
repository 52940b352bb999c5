// The root certificate published to member namespaces, as istiod does: ConfigMap
// istio-ca-root-cert with key root-cert.pem.
import { isStraitError } from '../../../base/errors/index.js';
import { GROUPS } from '../../../platform/resources/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';

export const ROOT_CERT_CONFIGMAP = `${GROUPS.meshWord}-ca-root-cert`;
export const ROOT_CERT_KEY = 'root-cert.pem';

export function rootCertConfigMap(namespace: string, rootPem: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: ROOT_CERT_CONFIGMAP, namespace, labels: { [`${GROUPS.meshWord}.io/config`]: 'true' } },
    data: { [ROOT_CERT_KEY]: rootPem },
  };
}

/**
 * Apply the root ConfigMap in each namespace; returns the namespaces whose ConfigMap changed.
 * A member namespace that does not exist (yet) is skipped and named in `missing` (Maistra's
 * pending member): the others are not held back by it, and the namespace's creation brings
 * the next reconcile.
 */
export async function publishRootCert(store: ResourceStore, namespaces: Iterable<string>, rootPem: string, missing: string[] = []): Promise<string[]> {
  const changed: string[] = [];
  for (const ns of namespaces) {
    const existing = await store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, ROOT_CERT_CONFIGMAP, ns);
    const data = existing?.['data'] as Record<string, string> | undefined;
    if (data?.[ROOT_CERT_KEY] === rootPem) continue;
    try {
      await store.apply(rootCertConfigMap(ns, rootPem), { fieldManager: 'strait-mesh-ca' });
    } catch (err) {
      // (a real API server answers 404 for an object in a namespace that does not exist)
      if (isStraitError(err, 'STRAIT_ERR_NOT_FOUND') && !(await store.get({ apiVersion: 'v1', kind: 'Namespace' }, ns))) {
        missing.push(ns);
        continue;
      }
      throw err;
    }
    changed.push(ns);
  }
  return changed;
}
