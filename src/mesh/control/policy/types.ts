// Shapes of the mesh resources (upstream fields only) as the policy functions read them.
import type { KubeObject } from '../../../platform/store/index.js';

export type MtlsMode = 'UNSET' | 'PERMISSIVE' | 'DISABLE' | 'STRICT';
export type EffectiveMode = Exclude<MtlsMode, 'UNSET'>;
export type TlsMode = 'DISABLE' | 'SIMPLE' | 'MUTUAL' | 'ISTIO_MUTUAL';

export interface PeerAuthenticationSpec {
  selector?: { matchLabels?: Record<string, string> };
  mtls?: { mode?: MtlsMode };
  portLevelMtls?: Record<string, { mode?: MtlsMode }>;
}
export type PeerAuthentication = KubeObject<PeerAuthenticationSpec>;

export interface TlsSettings {
  mode?: TlsMode;
  sni?: string;
  subjectAltNames?: string[];
}
export interface TrafficPolicy {
  tls?: TlsSettings;
  portLevelSettings?: { port?: { number?: number }; tls?: TlsSettings }[];
}
export interface DestinationRuleSpec {
  host?: string;
  trafficPolicy?: TrafficPolicy;
  exportTo?: string[];
}
export type DestinationRule = KubeObject<DestinationRuleSpec>;

export interface SmcpSpec {
  version?: string;
  security?: {
    dataPlane?: { mtls?: boolean; automtls?: boolean };
    controlPlane?: { mtls?: boolean };
    identity?: { type?: string };
    trust?: { domain?: string };
  };
}
export type ServiceMeshControlPlane = KubeObject<SmcpSpec>;

/** A reference to the object a decision came from, for `strait mesh describe`. */
export interface PolicySource {
  kind: string;
  namespace: string;
  name: string;
  /** mesh (root namespace), namespace, workload, port, generated, default */
  scope: string;
  /** true when the object was generated from the control-plane resource, not applied by a user */
  generated?: boolean;
  /** the port a port-level setting names */
  port?: number;
}
