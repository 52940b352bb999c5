// Names shared by the broker, the join and the export/import controllers. Submariner's
// namespaces and the MCS API's label keys, so that tools that know them find things.
import { GROUPS } from '../../../platform/resources/index.js';

/** Namespace on the broker holding Clusters, Endpoints, aggregated ServiceImports and exported EndpointSlices. */
export const BROKER_NAMESPACE = 'submariner-k8s-broker';
/** Namespace in each joined cluster holding the join's records and secrets. */
export const OPERATOR_NAMESPACE = 'submariner-operator';

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

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Name of a service's aggregated ServiceImport on the broker: dots cannot occur in either part. */
export const brokerImportName = (namespace: string, service: string): string => `${service}.${namespace}`;
/** Name of one cluster's EndpointSlice for a service on the broker. */
export const brokerSliceName = (namespace: string, service: string, cluster: string): string => `${service}.${namespace}.${cluster}`;
/** Name of an imported EndpointSlice in a joined cluster (in the service's namespace). */
export const localSliceName = (service: string, cluster: string): string => `${service}.${cluster}`;
