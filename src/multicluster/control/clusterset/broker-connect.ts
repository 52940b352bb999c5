// Reaching a broker by the URL in its broker info: unix:///path/store.sock#broker (a local
// world's store API), file:///dir (an embedded store directory) or https://host:port (a
// Kubernetes API server; the token is the broker ServiceAccount's, the CA the server's).
import { existsSync } from 'node:fs';
import { E, isStraitError } from '../../../base/errors/index.js';
import { connectStore, openEmbeddedStore, openKubernetesStore, type ResourceStore } from '../../../platform/store/index.js';
import { fingerprint } from './broker-info.js';
import { brokerKubeconfig } from './broker-kube.js';
import { BROKER_CONNECTION_SECRET, BROKER_NAMESPACE, BROKER_SECRET, OPERATOR_NAMESPACE, PSK_SECRET } from './names.js';
import { K, unb64 } from './store-util.js';

/**
 * A broker request whose connection stays silent this long fails (STRAIT_ERR_STORE_UNAVAILABLE):
 * a broker cut off is seen within the 10 s of docs/faults.md, not after the stores' 30 s
 * default; a slow answer that keeps sending is not cut (the timeout is of silence).
 */
export const BROKER_REQUEST_TIMEOUT_MS = 5000;

export function openBrokerByUrl(url: string, token: string, caPem?: string): ResourceStore {
  if (url.startsWith('unix://')) {
    const hash = url.indexOf('#');
    const socketPath = url.slice('unix://'.length, hash < 0 ? undefined : hash);
    const cluster = hash < 0 ? 'broker' : url.slice(hash + 1);
    if (!existsSync(socketPath)) throw E.mcBrokerUrl(url, `the socket ${socketPath} does not exist; is the world that runs the broker up?`);
    return connectStore({ socketPath, token, cluster, requestTimeoutMs: BROKER_REQUEST_TIMEOUT_MS });
  }
  if (url.startsWith('file://')) {
    const dir = url.slice('file://'.length);
    if (!existsSync(dir)) throw E.mcBrokerUrl(url, `the directory ${dir} does not exist`);
    return openEmbeddedStore({ dir });
  }
  if (url.startsWith('https://')) {
    if (!caPem?.includes('-----BEGIN CERTIFICATE-----')) throw E.mcBrokerUrl(url, 'a Kubernetes broker needs the API server CA (brokerCA) to be verified');
    return openKubernetesStore({ kubeconfig: brokerKubeconfig(url, caPem, token), requestTimeoutMs: BROKER_REQUEST_TIMEOUT_MS });
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

/**
 * What a joined cluster recorded at its join to reach the broker (the connection Secret and
 * the PSK Secret); `key` changes whenever either changes (a new deploy-broker and join, or
 * a restarted world that rotated its store token). Undefined when the cluster has not joined.
 */
export interface JoinConnection {
  key: string;
  url: string;
  token: string;
  ca: string;
  namespace: string;
  /** base64 PSK text of the join (the PSK Secret's data) */
  psk: string;
}

export async function readJoinConnection(local: ResourceStore): Promise<JoinConnection | undefined> {
  const [conn, pskSecret] = await Promise.all([
    local.get(K.Secret, BROKER_CONNECTION_SECRET, OPERATOR_NAMESPACE),
    local.get(K.Secret, PSK_SECRET, OPERATOR_NAMESPACE),
  ]);
  const data = (conn?.['data'] ?? {}) as Record<string, string>;
  const url = unb64(data['brokerURL']);
  if (!url) return undefined;
  const psk = ((pskSecret?.['data'] ?? {}) as Record<string, string>)['psk'] ?? '';
  const token = unb64(data['token']);
  return {
    key: fingerprint(JSON.stringify([url, token, data['ca.crt'] ?? '', data['namespace'] ?? '', psk])),
    url,
    token,
    ca: unb64(data['ca.crt']),
    namespace: unb64(data['namespace']) || BROKER_NAMESPACE,
    psk,
  };
}

/**
 * Open the broker a join names and check the join is the broker's current one: the broker
 * accepts its token, and the broker's fingerprints (written by the last deploy-broker) are
 * of this token and this PSK. `{ stale }` says why not (the broker was deployed again, or
 * the world restarted with a new store token): such a join must be done again. A broker
 * that cannot be asked (unreachable) throws; one whose RBAC hides the fingerprints counts
 * as current.
 */
export async function openCurrentBroker(conn: JoinConnection): Promise<{ broker: ResourceStore } | { stale: string }> {
  const broker = openBrokerByUrl(conn.url, conn.token, conn.ca || undefined);
  let secret;
  try {
    secret = await broker.get(K.Secret, BROKER_SECRET, conn.namespace);
  } catch (err) {
    if (isStraitError(err) && err.code === 'STRAIT_ERR_UNAUTHORIZED') {
      await broker.close().catch(() => undefined);
      return { stale: `the broker ${conn.url} refuses the join's access token (${err.message})` };
    }
    if (isStraitError(err) && err.code === 'STRAIT_ERR_KUBE_FORBIDDEN') return { broker };
    await broker.close().catch(() => undefined);
    throw err;
  }
  const data = (secret?.['data'] ?? {}) as Record<string, string>;
  if (secret && unb64(data['tokenFingerprint']) !== fingerprint(conn.token)) {
    await broker.close().catch(() => undefined);
    return { stale: `the broker ${conn.url} was deployed again since this join: its access token differs` };
  }
  if (secret && conn.psk && unb64(data['pskFingerprint']) !== fingerprint(Buffer.from(conn.psk, 'base64'))) {
    await broker.close().catch(() => undefined);
    return { stale: `the broker ${conn.url} was deployed again since this join: its IPsec PSK differs` };
  }
  return { broker };
}
