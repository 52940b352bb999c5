// The Submariner resource (submariner.io/v1alpha1 Submariner "submariner" in the operator
// namespace): the description of a joined cluster's deployment, with the field names of
// Submariner's operator. subctl looks it up first; without it, it reports the connectivity
// feature as not installed. The join writes its spec and the status subctl shows (cluster
// ID, CIDRs, network plugin, deployment info); the active gateway's records publisher keeps
// status.gateways equal to the cluster's Gateway records (records-sync.ts).
import { isStraitError } from '../../../base/errors/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import type { ClusterNetwork } from './network.js';
import { BROKER_CONNECTION_SECRET, OPERATOR_NAMESPACE, PSK_SECRET, SUBMARINER_NAME } from './names.js';
import { K } from './store-util.js';

export interface SubmarinerDeployment {
  network: ClusterNetwork;
  /** the broker-info file's brokerURL */
  brokerURL: string;
  brokerNamespace: string;
  cableDriver: string;
  natEnabled: boolean;
  serviceDiscovery: boolean;
  /** strait's version (spec.version, as `subctl show versions` reads it) */
  version: string;
  /** where the resource and the records are (default: the operator namespace) */
  namespace?: string;
}

/** Submariner keeps the API server as host:port (no scheme); a world's broker URL stays as it is. */
const apiServer = (url: string): string => url.replace(/^https:\/\//, '').replace(/\/+$/, '');

export function submarinerResource(d: SubmarinerDeployment): KubeObject {
  const ns = d.namespace ?? OPERATOR_NAMESPACE;
  const n = d.network;
  return {
    apiVersion: K.Submariner.apiVersion,
    kind: 'Submariner',
    metadata: { name: SUBMARINER_NAME, namespace: ns },
    spec: {
      broker: 'k8s',
      brokerK8sApiServer: apiServer(d.brokerURL),
      brokerK8sRemoteNamespace: d.brokerNamespace,
      // the broker's token and CA stay in the Secret (never in this resource)
      brokerK8sSecret: BROKER_CONNECTION_SECRET,
      cableDriver: d.cableDriver,
      ceIPSecDebug: false,
      ceIPSecPSKSecret: PSK_SECRET,
      clusterCIDR: n.clusterCIDRs.join(','),
      clusterID: n.clusterId,
      colorCodes: 'blue',
      debug: false,
      namespace: ns,
      natEnabled: d.natEnabled,
      repository: 'strait',
      serviceCIDR: n.serviceCIDRs.join(','),
      serviceDiscoveryEnabled: d.serviceDiscovery,
      version: d.version,
    },
  };
}

/** What the join knows of the status; `gateways` are the publisher's. */
export function submarinerStatus(d: SubmarinerDeployment, gateways: unknown[] = []): Record<string, unknown> {
  const n = d.network;
  return {
    clusterID: n.clusterId,
    natEnabled: d.natEnabled,
    colorCodes: 'blue',
    clusterCIDR: n.clusterCIDRs.join(','),
    serviceCIDR: n.serviceCIDRs.join(','),
    networkPlugin: n.networkPlugin,
    gateways,
    deploymentInfo: { kubernetesType: 'k8s' },
  };
}

/** Write the resource and its status (keeping the gateways a publisher wrote). */
export async function writeSubmariner(local: ResourceStore, d: SubmarinerDeployment): Promise<void> {
  const applied = await local.apply(submarinerResource(d));
  const gateways = (applied.status as { gateways?: unknown[] } | undefined)?.gateways ?? [];
  await local.updateStatus({ ...applied, status: submarinerStatus(d, gateways), metadata: { ...applied.metadata, resourceVersion: undefined } });
}

/**
 * status.gateways of the Submariner resource := `gateways` (submariner.io/v1 GatewayStatus
 * objects). Nothing when there is no Submariner resource (not joined yet); a concurrent
 * writer wins, and the next tick writes again.
 */
export async function publishSubmarinerGateways(local: ResourceStore, ns: string, gateways: Record<string, unknown>[]): Promise<void> {
  const cur = await local.get(K.Submariner, SUBMARINER_NAME, ns);
  if (!cur) return;
  const status = (cur.status ?? {}) as Record<string, unknown>;
  if (JSON.stringify(status['gateways'] ?? []) === JSON.stringify(gateways)) return;
  try {
    await local.updateStatus({ ...cur, status: { ...status, gateways } });
  } catch (err) {
    if (!isStraitError(err) || err.code !== 'STRAIT_ERR_CONFLICT') throw err;
  }
}
