// The broker in Kubernetes mode, as Submariner's: a namespace (submariner-k8s-broker) of one
// cluster's API server. deploy-broker makes a ServiceAccount there with RBAC for joined
// clusters (their records, ServiceImports and EndpointSlices in that namespace only; the Broker object read only), gets a
// token for it (TokenRequest), and hands the API server's URL, its CA, the token and a new
// PSK to the joins through broker-info.subm. A joined cluster reaches the broker as that
// ServiceAccount (openBrokerByUrl with an https:// URL).
import { E, isStraitError } from '../../../base/errors/index.js';
import type { KubernetesResourceStore } from '../../../platform/store/index.js';
import { deployBroker, type DeployBrokerOptions, type DeployedBroker } from './broker.js';
import type { BrokerInfo } from './broker-info.js';
import { BROKER_CONFIGMAP, BROKER_CONNECTION_SECRET, BROKER_NAMESPACE, BROKER_SECRET, JOIN_CONFIGMAP, OPERATOR_NAMESPACE, PSK_SECRET } from './names.js';
import { b64, ensureNamespace } from './store-util.js';

/** The ServiceAccount joined clusters act as on the broker. */
export const BROKER_CLIENT = 'strait-broker-client';
/** Default lifetime of the broker token (the API server may cap it: --service-account-max-token-expiration). */
export const BROKER_TOKEN_SECONDS = 365 * 24 * 3600;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** What a joined cluster may do on the broker: exactly what join and the export/import sync use. */
export function brokerClientRules(): Record<string, unknown>[] {
  return [
    { apiGroups: ['submariner.io'], resources: ['clusters', 'endpoints', 'gateways'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    { apiGroups: ['submariner.io'], resources: ['endpoints/status', 'gateways/status'], verbs: ['get', 'update', 'patch'] },
    // the broker's description (show brokers), read only
    { apiGroups: ['submariner.io'], resources: ['brokers'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    { apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [BROKER_SECRET], verbs: ['get'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: [BROKER_CONFIGMAP], verbs: ['get'] },
  ];
}

/** kubeconfig text for a token on an API server verified with `caPem`. */
export function brokerKubeconfig(server: string, caPem: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'broker',
    clusters: [{ name: 'broker', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: BROKER_CLIENT, user: { token } }],
    contexts: [{ name: 'broker', context: { cluster: 'broker', user: BROKER_CLIENT, namespace: BROKER_NAMESPACE } }],
  });
}

/** Create or replace an object by server-side apply (RBAC objects and the like, outside kinds.ts). */
async function ssa(store: KubernetesResourceStore, path: string, obj: Record<string, unknown>): Promise<void> {
  await store.raw({ method: 'PATCH', path, body: obj, contentType: 'application/apply-patch+yaml', query: { fieldManager: 'strait-broker', force: 'true' } });
}

export interface DeployKubernetesBrokerOptions extends Omit<DeployBrokerOptions, 'brokerURL' | 'token' | 'ca'> {
  /** lifetime of the token handed to joining clusters, seconds (default one year) */
  tokenSeconds?: number;
}

export interface KubernetesBrokerInfo extends DeployedBroker {
  /** when the token expires (the API server's answer) */
  tokenExpires: string;
}

export async function deployKubernetesBroker(store: KubernetesResourceStore, opts: DeployKubernetesBrokerOptions): Promise<KubernetesBrokerInfo> {
  const conn = await store.connection();
  if (!conn.caPem)
    throw E.kubeconfigInvalid(
      conn.server,
      'its cluster has no certificate-authority(-data); the broker-info file must carry the CA joining clusters verify the API server with',
    );
  await ensureNamespace(store, BROKER_NAMESPACE);
  const ns = BROKER_NAMESPACE;
  const labels = { 'app.kubernetes.io/part-of': 'strait', 'app.kubernetes.io/component': 'broker' };
  await ssa(store, `/api/v1/namespaces/${ns}/serviceaccounts/${BROKER_CLIENT}`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: BROKER_CLIENT, namespace: ns, labels },
  });
  await ssa(store, `${RBAC}/namespaces/${ns}/roles/${BROKER_CLIENT}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: BROKER_CLIENT, namespace: ns, labels },
    rules: brokerClientRules(),
  });
  const subjects = [{ kind: 'ServiceAccount', name: BROKER_CLIENT, namespace: ns }];
  await ssa(store, `${RBAC}/namespaces/${ns}/rolebindings/${BROKER_CLIENT}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: BROKER_CLIENT, namespace: ns, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: BROKER_CLIENT },
    subjects,
  });
  // the sync checks the broker namespace exists before writing into it: get on that one namespace
  await ssa(store, `${RBAC}/clusterroles/${BROKER_CLIENT}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: BROKER_CLIENT, labels },
    rules: [{ apiGroups: [''], resources: ['namespaces'], resourceNames: [ns], verbs: ['get'] }],
  });
  await ssa(store, `${RBAC}/clusterrolebindings/${BROKER_CLIENT}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: BROKER_CLIENT, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BROKER_CLIENT },
    subjects,
  });
  const tr = await requestToken(store, ns, opts.tokenSeconds ?? BROKER_TOKEN_SECONDS);
  const status = (tr.body as { status?: { token?: string; expirationTimestamp?: string } }).status;
  if (!status?.token) throw E.kubeApi(`token of ServiceAccount ${ns}/${BROKER_CLIENT}`, tr.status, 'NoToken', 'the TokenRequest answer has no token');
  const info = await deployBroker(store, { ...opts, brokerURL: conn.server, token: status.token, ca: conn.caPem });
  return { ...info, tokenExpires: status.expirationTimestamp ?? '' };
}

/**
 * A TokenRequest for the broker client's ServiceAccount. Right after the ServiceAccount is
 * applied the API server can still answer 404 for it (seen under load): ask again for up to
 * 5 s before giving up.
 */
async function requestToken(store: KubernetesResourceStore, ns: string, expirationSeconds: number): ReturnType<KubernetesResourceStore['raw']> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      return await store.raw({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/serviceaccounts/${BROKER_CLIENT}/token`,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
      });
    } catch (err) {
      if (!isStraitError(err, 'STRAIT_ERR_NOT_FOUND') || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export interface KubernetesClusterSideOptions {
  /** the namespace strait's daemons run in (deploy/: strait-system) */
  namespace?: string;
  /** the control module's ServiceAccount (deploy/: strait-control) */
  controlServiceAccount?: string;
}

/**
 * The cluster side of a join in Kubernetes mode, after joinCluster: the gateway's PSK as
 * Secret strait-psk (key psk, the PSK text the gateway's pskFile holds) in strait's
 * namespace, and a Role in the operator namespace letting the control module read the
 * broker connection and the join settings (and nothing else there).
 */
export async function setupKubernetesClusterSide(local: KubernetesResourceStore, info: BrokerInfo, o: KubernetesClusterSideOptions = {}): Promise<void> {
  const ns = o.namespace ?? 'strait-system';
  const sa = o.controlServiceAccount ?? 'strait-control';
  await ensureNamespace(local, ns);
  await local.apply(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'strait-psk', namespace: ns },
      type: 'Opaque',
      data: { psk: b64(info.ipsecPSK.toString('base64')) },
    },
    { fieldManager: 'strait-join' },
  );
  const name = 'strait-control-join';
  const labels = { 'app.kubernetes.io/part-of': 'strait' };
  await ssa(local, `${RBAC}/namespaces/${OPERATOR_NAMESPACE}/roles/${name}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace: OPERATOR_NAMESPACE, labels },
    rules: [
      { apiGroups: [''], resources: ['secrets'], resourceNames: [BROKER_CONNECTION_SECRET, PSK_SECRET], verbs: ['get'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [JOIN_CONFIGMAP], verbs: ['get'] },
    ],
  });
  await ssa(local, `${RBAC}/namespaces/${OPERATOR_NAMESPACE}/rolebindings/${name}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: OPERATOR_NAMESPACE, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
  });
}
