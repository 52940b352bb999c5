// The root certificate published to member namespaces, as istiod does: ConfigMap
// istio-ca-root-cert with key root-cert.pem.
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

/** Apply the root ConfigMap in each namespace; returns the namespaces whose ConfigMap changed. */
export async function publishRootCert(store: ResourceStore, namespaces: Iterable<string>, rootPem: string): Promise<string[]> {
  const changed: string[] = [];
  for (const ns of namespaces) {
    const existing = await store.get({ apiVersion: 'v1', kind: 'ConfigMap' }, ROOT_CERT_CONFIGMAP, ns);
    const data = existing?.['data'] as Record<string, string> | undefined;
    if (data?.[ROOT_CERT_KEY] === rootPem) continue;
    await store.apply(rootCertConfigMap(ns, rootPem), { fieldManager: 'strait-mesh-ca' });
    changed.push(ns);
  }
  return changed;
}
