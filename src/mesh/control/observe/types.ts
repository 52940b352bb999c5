// The MeshTrafficObservation resource (docs/mesh.md, Observed traffic): one per injected pod
// whose sidecar runs, written by the mesh agent from its sidecar's flow reports.
import { Kinds } from '../../../platform/resources/index.js';
import { kindRef, type KubeObject } from '../../../platform/store/index.js';
import type { FlowReportEntry } from '../../dataplane/proxy/index.js';
import type { InboundResolution } from '../policy/index.js';

export const OBSERVATION_KIND = kindRef(Kinds.MeshTrafficObservation);

export interface ObservedClient {
  /** the source address the sidecar saw (the last one, for an mTLS client) */
  address: string;
  /** the SPIFFE ID the client proved (tls: mtls) */
  identity?: string;
  /** the pod of this cluster with that address, when known */
  namespace?: string;
  pod?: string;
  serviceAccount?: string;
  sidecar?: boolean;
}

/**
 * One flow as the observation records it: the proxy's report entry (src/mesh/dataplane/proxy,
 * FlowReportEntry) with the client resolved to a pod, the times as RFC 3339 text, `count`
 * summed over the reports, and what STRICT would do to it.
 */
export interface ObservedFlow extends Omit<FlowReportEntry, 'address' | 'identity' | 'firstSeen' | 'lastSeen'> {
  client: ObservedClient;
  firstSeen: string;
  lastSeen: string;
  /** accepted plaintext (or non-mesh TLS) on a port that is not STRICT now: STRICT would reset it */
  strictWouldReset: boolean;
}

export interface ObservationSummary {
  flows: number;
  mtls: number;
  plaintext: number;
  tlsPassthrough: number;
  reset: number;
  strictWouldReset: number;
}

export interface ObservationSpec {
  pod: string;
  deployment?: string;
  serviceAccount: string;
  spiffeId: string;
  address?: string;
}

export interface ObservationStatus {
  lastReport?: string;
  flowLimit: number;
  evictedFlows: number;
  /** the effective inbound mode and the policies behind it (as `strait mesh describe -o json` .inbound) */
  inbound?: InboundResolution;
  summary: ObservationSummary;
  flows: ObservedFlow[];
}

export type MeshTrafficObservation = KubeObject<ObservationSpec, ObservationStatus>;

/** One flow with the server it reached: a row of `strait mesh flows`. */
export interface FlowRow extends ObservedFlow {
  namespace: string;
  /** the Deployment when the pod has one, else the pod */
  workload: string;
  pod: string;
}
