// Names shared by the broker, the join and the export/import controllers. Submariner's
// namespaces and the MCS API's label keys, so that tools that know them find things.
import { E } from '../../../base/errors/index.js';
import { GROUPS } from '../../../platform/resources/index.js';

/** Namespace on the broker holding Clusters, Endpoints, aggregated ServiceImports and exported EndpointSlices. */
export const BROKER_NAMESPACE = 'submariner-k8s-broker';
/**
 * Namespace in each joined cluster holding the join's records and secrets, the Submariner
 * resource and the gateways' Endpoint and Gateway records: Submariner's, which its tools
 * (subctl show, diagnose) read. The one place to change it: STRAIT_OPERATOR_NAMESPACE.
 */
export const OPERATOR_NAMESPACE = operatorNamespace(process.env['STRAIT_OPERATOR_NAMESPACE']);
/** Name of the Submariner resource (submariner.io/v1alpha1) describing the deployment, as subctl looks it up. */
export const SUBMARINER_NAME = 'submariner';

/** Name of the Broker object (submariner.io/v1alpha1) in the broker's namespace, as Submariner's deploy-broker names it. */
export const BROKER_NAME = 'submariner-broker';
/** ConfigMap on the broker: the broker's description (components, domains, deploy time). */
export const BROKER_CONFIGMAP = 'strait-broker';
/** Secret on the broker: fingerprints of the current access token and PSK (never the PSK itself). */
export const BROKER_SECRET = 'strait-broker-fingerprints';
/** Secret in a joined cluster: the IPsec-like PSK for the gateway daemon (Submariner's name). */
export const PSK_SECRET = 'submariner-ipsec-psk';
/** Secret in a joined cluster: how the control module reaches the broker. */
export const BROKER_CONNECTION_SECRET = 'strait-broker-connection';
/** ConfigMap in a joined cluster: the join's settings (cluster ID, cable driver, NAT-T). */
export const JOIN_CONFIGMAP = 'strait-join';

export const LABEL_SERVICE_NAME = 'multicluster.kubernetes.io/service-name';
export const LABEL_SOURCE_CLUSTER = 'multicluster.kubernetes.io/source-cluster';
export const LABEL_SERVICE_NAMESPACE = 'multicluster.kubernetes.io/service-namespace';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'strait-multicluster';

/** Annotations on a broker EndpointSlice that carry what the aggregate needs. */
export const ANN_EXPORT_CREATED = `strait.${GROUPS.multicluster}/export-created`;
export const ANN_SERVICE_TYPE = `strait.${GROUPS.multicluster}/service-type`;
export const ANN_SYNCED_AT = `strait.${GROUPS.multicluster}/synced-at`;
/** on a broker slice: the exported Service's properties and the export's labels/annotations (JSON, aggregate.ts ServiceProps) */
export const ANN_SERVICE_PROPS = `strait.${GROUPS.multicluster}/service-properties`;

/** Annotation on a Cluster record: the network plugin (Submariner's Cluster spec has no field for it). */
export const ANN_NETWORK_PLUGIN = `strait.${GROUPS.cluster}/network-plugin`;

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

function operatorNamespace(v: string | undefined): string {
  if (v === undefined || v === '') return 'submariner-operator';
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v)) throw E.configInvalid('STRAIT_OPERATOR_NAMESPACE', v, 'must be a namespace name (a DNS-1123 label)');
  return v;
}

/** Name of a service's aggregated ServiceImport on the broker: dots cannot occur in either part. */
export const brokerImportName = (namespace: string, service: string): string => `${service}.${namespace}`;
/** Name of one cluster's EndpointSlice for a service on the broker. */
export const brokerSliceName = (namespace: string, service: string, cluster: string): string => `${service}.${namespace}.${cluster}`;
/** Name of an imported EndpointSlice in a joined cluster (in the service's namespace). */
export const localSliceName = (service: string, cluster: string): string => `${service}.${cluster}`;
