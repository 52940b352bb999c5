// What the control-plane resource (ServiceMeshControlPlane, maistra.io/v2) decides, as the
// OSSM 2 operator renders it: the root namespace is the control plane's namespace;
// auto mTLS follows spec.security.dataPlane.automtls (Istio's default, on, when unset);
// a default PeerAuthentication is generated in the control-plane namespace, PERMISSIVE, or
// STRICT when dataPlane.mtls is true, which also generates a default DestinationRule
// host "*.local" with ISTIO_MUTUAL. With all three flags false the operator manages no
// mTLS: the generated PERMISSIVE default leaves namespace objects to decide.
import { Kinds } from '../../../platform/resources/index.js';
import type { DestinationRule, PeerAuthentication, ServiceMeshControlPlane } from './types.js';

export const DEFAULT_ROOT_NAMESPACE = 'istio-system';
export const GENERATED_ANNOTATION = 'strait.dev/generated-from';

export interface ControlPlaneSettings {
  rootNamespace: string;
  trustDomain: string;
  dataPlaneMtls: boolean;
  autoMtls: boolean;
  controlPlaneMtls: boolean;
  /** true when no SMCP exists (vanilla Istio defaults; every namespace is a member) */
  implicit: boolean;
  smcp?: { namespace: string; name: string };
}

export function controlPlaneSettings(smcps: readonly ServiceMeshControlPlane[]): ControlPlaneSettings {
  const smcp = [...smcps].sort((a, b) => (Date.parse(a.metadata.creationTimestamp ?? '') || 0) - (Date.parse(b.metadata.creationTimestamp ?? '') || 0))[0];
  if (!smcp) {
    return {
      rootNamespace: DEFAULT_ROOT_NAMESPACE,
      trustDomain: 'cluster.local',
      dataPlaneMtls: false,
      autoMtls: true,
      controlPlaneMtls: false,
      implicit: true,
    };
  }
  // read field by field: a value of the wrong type counts as unset
  const sec = (smcp.spec?.security && typeof smcp.spec.security === 'object' ? smcp.spec.security : {}) as NonNullable<
    NonNullable<ServiceMeshControlPlane['spec']>['security']
  >;
  const domain = sec.trust?.domain;
  const automtls = sec.dataPlane?.automtls;
  return {
    rootNamespace: smcp.metadata.namespace ?? DEFAULT_ROOT_NAMESPACE,
    trustDomain: typeof domain === 'string' && /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(domain) ? domain : 'cluster.local',
    dataPlaneMtls: sec.dataPlane?.mtls === true,
    autoMtls: typeof automtls === 'boolean' ? automtls : true,
    controlPlaneMtls: sec.controlPlane?.mtls === true,
    implicit: false,
    smcp: { namespace: smcp.metadata.namespace ?? DEFAULT_ROOT_NAMESPACE, name: smcp.metadata.name },
  };
}

/** The objects the operator generates from the SMCP (none without an SMCP). */
export function generatedPolicies(s: ControlPlaneSettings): { peerAuthentications: PeerAuthentication[]; destinationRules: DestinationRule[] } {
  if (s.implicit || !s.smcp) return { peerAuthentications: [], destinationRules: [] };
  const from = `${Kinds.ServiceMeshControlPlane.kind}/${s.smcp.name}`;
  const meta = (name: string) => ({
    name,
    namespace: s.rootNamespace,
    // generated with the control plane: older than anything a user applies afterwards
    creationTimestamp: '1970-01-01T00:00:00Z',
    annotations: { [GENERATED_ANNOTATION]: from },
  });
  const pa: PeerAuthentication = {
    apiVersion: Kinds.PeerAuthentication.apiVersion,
    kind: 'PeerAuthentication',
    metadata: meta('default'),
    spec: { mtls: { mode: s.dataPlaneMtls ? 'STRICT' : 'PERMISSIVE' } },
  };
  const drs: DestinationRule[] = s.dataPlaneMtls
    ? [
        {
          apiVersion: Kinds.DestinationRule.apiVersion,
          kind: 'DestinationRule',
          metadata: meta('default'),
          spec: { host: '*.local', trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' } } },
        },
      ]
    : [];
  return { peerAuthentications: [pa], destinationRules: drs };
}
