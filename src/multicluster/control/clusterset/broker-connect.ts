// Reaching a broker by the URL in its broker info: unix:///path/store.sock#broker (a local
// world's store API), file:///dir (an embedded store directory) or https://host:port (a
// Kubernetes API server; the token is the broker ServiceAccount's, the CA the server's).
import { existsSync } from 'node:fs';
import { E } from '../../../base/errors/index.js';
import { connectStore, openEmbeddedStore, openKubernetesStore, type ResourceStore } from '../../../platform/store/index.js';
import { brokerKubeconfig } from './broker-kube.js';
import { BROKER_CONNECTION_SECRET, OPERATOR_NAMESPACE } from './names.js';
import { K, unb64 } from './store-util.js';

export function openBrokerByUrl(url: string, token: string, caPem?: string): ResourceStore {
  if (url.startsWith('unix://')) {
    const hash = url.indexOf('#');
    const socketPath = url.slice('unix://'.length, hash < 0 ? undefined : hash);
    const cluster = hash < 0 ? 'broker' : url.slice(hash + 1);
    if (!existsSync(socketPath)) throw E.mcBrokerUrl(url, `the socket ${socketPath} does not exist; is the world that runs the broker up?`);
    return connectStore({ socketPath, token, cluster });
  }
  if (url.startsWith('file://')) {
    const dir = url.slice('file://'.length);
    if (!existsSync(dir)) throw E.mcBrokerUrl(url, `the directory ${dir} does not exist`);
    return openEmbeddedStore({ dir });
  }
  if (url.startsWith('https://')) {
    if (!caPem?.includes('-----BEGIN CERTIFICATE-----')) throw E.mcBrokerUrl(url, 'a Kubernetes broker needs the API server CA (brokerCA) to be verified');
    return openKubernetesStore({ kubeconfig: brokerKubeconfig(url, caPem, token) });
  }
  throw E.mcBrokerUrl(url, 'the broker URL must be unix:// (local world), file:// (embedded store) or https:// (a Kubernetes API server)');
}

/** The broker a joined cluster uses (from the connection secret written at join); undefined when not joined. */
export async function openBrokerOfCluster(local: ResourceStore): Promise<ResourceStore | undefined> {
  const s = await local.get(K.Secret, BROKER_CONNECTION_SECRET, OPERATOR_NAMESPACE);
  const data = (s?.['data'] ?? {}) as Record<string, string>;
  const url = unb64(data['brokerURL']);
  return url ? openBrokerByUrl(url, unb64(data['token']), unb64(data['ca.crt'])) : undefined;
}
