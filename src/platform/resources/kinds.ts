// Every kind strait knows, with upstream apiVersions by default. The prefixes of the
// product groups are configurable in one place: src/platform/resources/groups.ts.
import { GROUPS } from './groups.js';

export interface KindInfo {
  /** "group/version" or "v1" for core; the preferred (storage) version */
  apiVersion: string;
  kind: string;
  /** lowercase plural, as `strait get` and the Kubernetes API use it */
  plural: string;
  singular: string;
  shortNames: string[];
  namespaced: boolean;
  /** other served versions: the same schema, so an object converts by its apiVersion alone */
  alsoServed?: string[];
  /**
   * the version objects are stored in (default: apiVersion), one of the served ones; the
   * embedded store and the CRD (storage: true) both keep this one
   */
  storageVersion?: string;
}

const k = (
  apiVersion: string,
  kind: string,
  plural: string,
  namespaced: boolean,
  shortNames: string[] = [],
  alsoServed: string[] = [],
  storageVersion?: string,
): KindInfo => ({ apiVersion, kind, plural, singular: kind.toLowerCase(), shortNames, namespaced, alsoServed, ...(storageVersion ? { storageVersion } : {}) });

// The MCS API serves v1alpha1 (what strait reads and writes) and v1beta1 (upstream's
// storage version) with one schema: docs/multicluster.md, "API versions".
const MCS_V1ALPHA1 = `${GROUPS.multicluster}/v1alpha1`;
const MCS_V1BETA1 = `${GROUPS.multicluster}/v1beta1`;

export const Kinds = {
  // core
  Namespace: k('v1', 'Namespace', 'namespaces', false, ['ns']),
  ConfigMap: k('v1', 'ConfigMap', 'configmaps', true, ['cm']),
  Secret: k('v1', 'Secret', 'secrets', true),
  Service: k('v1', 'Service', 'services', true, ['svc']),
  Pod: k('v1', 'Pod', 'pods', true, ['po']),
  Node: k('v1', 'Node', 'nodes', false, ['no']),
  Event: k('v1', 'Event', 'events', true, ['ev']),
  EndpointSlice: k('discovery.k8s.io/v1', 'EndpointSlice', 'endpointslices', true),
  Deployment: k('apps/v1', 'Deployment', 'deployments', true, ['deploy']),
  Lease: k('coordination.k8s.io/v1', 'Lease', 'leases', true),
  // (A) GitOps
  AppProject: k(`${GROUPS.gitops}/v1alpha1`, 'AppProject', 'appprojects', true, ['appproj']),
  Application: k(`${GROUPS.gitops}/v1alpha1`, 'Application', 'applications', true, ['app']),
  // (B) mesh
  ServiceMeshControlPlane: k(`${GROUPS.meshOperator}/v2`, 'ServiceMeshControlPlane', 'servicemeshcontrolplanes', true, ['smcp']),
  ServiceMeshMemberRoll: k(`${GROUPS.meshOperator}/v1`, 'ServiceMeshMemberRoll', 'servicemeshmemberrolls', true, ['smmr']),
  PeerAuthentication: k(`security.${GROUPS.mesh}/v1beta1`, 'PeerAuthentication', 'peerauthentications', true, ['pa'], [`security.${GROUPS.mesh}/v1`]),
  DestinationRule: k(
    `networking.${GROUPS.mesh}/v1beta1`,
    'DestinationRule',
    'destinationrules',
    true,
    ['dr'],
    [`networking.${GROUPS.mesh}/v1alpha3`, `networking.${GROUPS.mesh}/v1`],
  ),
  // the inbound connections each sidecar saw, written by the mesh agent (docs/mesh.md, Observed traffic)
  MeshTrafficObservation: k(`${GROUPS.straitMesh}/v1alpha1`, 'MeshTrafficObservation', 'meshtrafficobservations', true, ['mto']),
  // (C) multicluster
  ServiceExport: k(MCS_V1ALPHA1, 'ServiceExport', 'serviceexports', true, ['svcex'], [MCS_V1BETA1], MCS_V1BETA1),
  ServiceImport: k(MCS_V1ALPHA1, 'ServiceImport', 'serviceimports', true, ['svcim'], [MCS_V1BETA1], MCS_V1BETA1),
  Cluster: k(`${GROUPS.cluster}/v1`, 'Cluster', 'clusters', true),
  Endpoint: k(`${GROUPS.cluster}/v1`, 'Endpoint', 'endpoints', true, ['ep']),
  Gateway: k(`${GROUPS.cluster}/v1`, 'Gateway', 'gateways', true, ['gw']),
  // the deployment's description, as Submariner's operator defines it (subctl looks it up)
  Submariner: k(`${GROUPS.cluster}/v1alpha1`, 'Submariner', 'submariners', true),
  // the broker's description in its namespace, as Submariner's operator defines it (`subctl show brokers` lists it)
  Broker: k(`${GROUPS.cluster}/v1alpha1`, 'Broker', 'brokers', true),
} as const satisfies Record<string, KindInfo>;

export type KindName = keyof typeof Kinds;
