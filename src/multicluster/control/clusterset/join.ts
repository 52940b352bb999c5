// Joining a cluster to the broker: check the broker info is current, refuse overlapping
// CIDRs (naming both clusters and both CIDRs), record the Cluster on the broker and in the
// cluster, hand the PSK and broker connection to the cluster's daemons, and describe the
// deployment in a Submariner resource (submariner.ts) for Submariner's tools.
import { E } from '../../../base/errors/index.js';
import { VERSION } from '../../../platform/cli-kit/index.js';
import type { KubeObject, ResourceStore } from '../../../platform/store/index.js';
import { checkBrokerInfoCurrent } from './broker.js';
import type { BrokerInfo } from './broker-info.js';
import { ANN_NETWORK_PLUGIN, BROKER_CONNECTION_SECRET, BROKER_NAMESPACE, DNS_LABEL, JOIN_CONFIGMAP, OPERATOR_NAMESPACE, PSK_SECRET } from './names.js';
import { type ClusterNetwork, findOverlaps, validateNetwork } from './network.js';
import { b64, cmData, ensureNamespace, K } from './store-util.js';
import { writeSubmariner } from './submariner.js';

export type CableDriver = 'libreswan' | 'strait';
export const CABLE_DRIVERS: CableDriver[] = ['libreswan', 'strait'];

export interface JoinOptions {
  broker: ResourceStore;
  local: ResourceStore;
  info: BrokerInfo;
  /** names the broker-info file in messages */
  source: string;
  network: ClusterNetwork;
  cableDriver?: CableDriver;
  natt?: boolean;
  now?: Date;
}

export interface JoinResult {
  clusterId: string;
  rejoined: boolean;
}

/**
 * Cluster record: Submariner's submariner.io/v1 Cluster spec, nothing else in it (its CRD
 * knows no other field); the network plugin goes in an annotation.
 */
export function clusterRecord(n: ClusterNetwork, namespace: string): KubeObject {
  return {
    apiVersion: K.Cluster.apiVersion,
    kind: 'Cluster',
    metadata: { name: n.clusterId, namespace, annotations: { [ANN_NETWORK_PLUGIN]: n.networkPlugin } },
    spec: {
      cluster_id: n.clusterId,
      color_codes: ['blue'],
      service_cidr: [...n.serviceCIDRs],
      cluster_cidr: [...n.clusterCIDRs],
      global_cidr: [],
    },
  };
}

/** Read a Cluster record back into network details (tolerates missing fields). */
export function networkOf(obj: KubeObject): ClusterNetwork {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return {
    clusterId: typeof spec['cluster_id'] === 'string' ? spec['cluster_id'] : obj.metadata.name,
    // records written before the annotation carried it in the spec
    networkPlugin: obj.metadata.annotations?.[ANN_NETWORK_PLUGIN] ?? (typeof spec['network_plugin'] === 'string' ? spec['network_plugin'] : 'generic'),
    serviceCIDRs: list(spec['service_cidr']),
    clusterCIDRs: list(spec['cluster_cidr']),
  };
}

export async function listJoinedClusters(broker: ResourceStore): Promise<ClusterNetwork[]> {
  const { items } = await broker.list(K.Cluster, { namespace: BROKER_NAMESPACE });
  return items.map(networkOf).sort((a, b) => a.clusterId.localeCompare(b.clusterId));
}

export async function joinCluster(opts: JoinOptions): Promise<JoinResult> {
  const { broker, local, info, network } = opts;
  if (!DNS_LABEL.test(network.clusterId)) throw E.mcClusterIdInvalid(network.clusterId);
  validateNetwork(network);
  await checkBrokerInfoCurrent(broker, info, opts.source);
  const joined = await listJoinedClusters(broker);
  const overlaps = findOverlaps(network, joined);
  const first = overlaps[0];
  if (first) {
    const refused = E.mcCidrOverlap(first.cluster, first.cidr, first.otherCluster, first.otherCidr);
    // recorded on the broker, where every cluster's operator (and the web console) sees a
    // refused join; best effort: a broker that takes no Events still refuses the join
    await broker
      .recordEvent({
        involvedObject: { apiVersion: K.Cluster.apiVersion, kind: 'Cluster', name: network.clusterId, namespace: BROKER_NAMESPACE },
        type: 'Warning',
        reason: 'CIDROverlap',
        message: refused.message,
        source: 'strait-join',
      })
      .catch(() => undefined);
    throw refused;
  }
  const rejoined = joined.some((c) => c.clusterId === network.clusterId);
  const now = (opts.now ?? new Date()).toISOString();

  await broker.apply(clusterRecord(network, BROKER_NAMESPACE));

  await ensureNamespace(local, OPERATOR_NAMESPACE);
  await local.apply(clusterRecord(network, OPERATOR_NAMESPACE));
  await local.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: PSK_SECRET, namespace: OPERATOR_NAMESPACE },
    type: 'Opaque',
    data: { psk: info.ipsecPSK.toString('base64') },
  });
  await local.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: BROKER_CONNECTION_SECRET, namespace: OPERATOR_NAMESPACE },
    type: 'Opaque',
    data: { brokerURL: b64(info.brokerURL), token: b64(info.clientToken), 'ca.crt': b64(info.brokerCA), namespace: b64(info.brokerNamespace) },
  });
  await local.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: JOIN_CONFIGMAP, namespace: OPERATOR_NAMESPACE },
    data: {
      clusterID: network.clusterId,
      cableDriver: opts.cableDriver ?? 'strait',
      natEnabled: String(opts.natt ?? true),
      networkPlugin: network.networkPlugin,
      serviceCIDRs: network.serviceCIDRs.join(','),
      clusterCIDRs: network.clusterCIDRs.join(','),
      serviceDiscovery: String(info.serviceDiscovery),
      components: info.components.join(','),
      brokerURL: info.brokerURL,
      joinedAt: now,
    },
  });
  await writeSubmariner(local, {
    network,
    brokerURL: info.brokerURL,
    brokerNamespace: info.brokerNamespace,
    cableDriver: opts.cableDriver ?? 'strait',
    natEnabled: opts.natt ?? true,
    serviceDiscovery: info.serviceDiscovery,
    version: VERSION,
  });
  return { clusterId: network.clusterId, rejoined };
}

export interface JoinSettings {
  clusterId: string;
  cableDriver: string;
  natEnabled: boolean;
  network: ClusterNetwork;
  brokerURL: string;
  joinedAt: string;
}

/** What a joined cluster recorded at join (undefined when it has not joined). */
export async function readJoin(local: ResourceStore): Promise<JoinSettings | undefined> {
  const cm = await local.get(K.ConfigMap, JOIN_CONFIGMAP, OPERATOR_NAMESPACE);
  if (!cm) return undefined;
  const d = cmData(cm);
  const list = (s: string | undefined) => (s ? s.split(',').filter(Boolean) : []);
  const clusterId = d['clusterID'] ?? '';
  return {
    clusterId,
    cableDriver: d['cableDriver'] ?? 'strait',
    natEnabled: d['natEnabled'] !== 'false',
    network: { clusterId, networkPlugin: d['networkPlugin'] ?? 'generic', serviceCIDRs: list(d['serviceCIDRs']), clusterCIDRs: list(d['clusterCIDRs']) },
    brokerURL: d['brokerURL'] ?? '',
    joinedAt: d['joinedAt'] ?? '',
  };
}
