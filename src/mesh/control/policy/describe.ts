// Explanations over a MeshView: the effective inbound mode per port with the policies that
// produced it, and the outbound TLS mode toward every service port (strait mesh describe).
import { spiffeId } from '../ca/index.js';
import { resolveOutbound, type OutboundResolution } from './destination-rule.js';
import { endpointsOf, type MeshService, type MeshView, type Workload } from './mesh-view.js';
import { resolveInbound, type InboundResolution } from './peer-authentication.js';
import type { EffectiveMode } from './types.js';

export interface OutboundRow extends OutboundResolution {
  service: string;
  namespace: string;
  host: string;
  port: number;
  targetPort: number;
  clusterIP?: string;
  /** endpoints of the service and whether each has a sidecar */
  endpoints: { name: string; ip?: string; sidecar: boolean; serviceAccount: string; inboundMode?: EffectiveMode }[];
}

export interface WorkloadDescription {
  namespace: string;
  name: string;
  /** the Deployment the pod belongs to, if any */
  deployment?: string;
  serviceAccount: string;
  spiffeId: string;
  sidecar: boolean;
  injection: string;
  rootNamespace: string;
  autoMtls: boolean;
  /** the SMCP's spec.security flags (dataPlane.mtls, controlPlane.mtls); undefined without an SMCP */
  controlPlane?: { name: string; namespace: string; dataPlaneMtls: boolean; controlPlaneMtls: boolean };
  inbound: InboundResolution | undefined;
  outbound: OutboundRow[];
}

export function inboundOf(view: MeshView, w: Workload): InboundResolution {
  return resolveInbound(w, view.peerAuthentications, view.settings.rootNamespace);
}

function modeOnPort(view: MeshView, w: Workload, port: number): EffectiveMode {
  const r = inboundOf(view, w);
  return r.ports.find((p) => p.port === port)?.mode ?? r.mode;
}

/** Outbound TLS from client `w` toward one service port (all endpoints must have a sidecar for auto mTLS). */
export function outboundTo(view: MeshView, w: Workload, s: MeshService, port: { port: number; targetPort: number }): OutboundRow {
  const eps = endpointsOf(view, s).map((e) => ({
    name: e.name,
    sidecar: e.sidecar,
    serviceAccount: e.serviceAccount,
    ...(e.ip ? { ip: e.ip } : {}),
    ...(e.sidecar ? { inboundMode: modeOnPort(view, e, port.targetPort) } : {}),
  }));
  const allSidecar = eps.length > 0 && eps.every((e) => e.sidecar);
  const anyDisable = eps.some((e) => e.inboundMode === 'DISABLE');
  const base = {
    service: s.name,
    namespace: s.namespace,
    host: s.host,
    port: port.port,
    targetPort: port.targetPort,
    endpoints: eps,
    ...(s.clusterIP ? { clusterIP: s.clusterIP } : {}),
  };
  if (!w.sidecar) return { ...base, mode: 'DISABLE', reason: "client has no sidecar: the application's bytes go out as they are" };
  const res = resolveOutbound(
    view.destinationRules,
    w.namespace,
    { host: s.host, namespace: s.namespace, port: port.port },
    { sidecar: allSidecar, ...(anyDisable ? { inboundMode: 'DISABLE' as const } : {}) },
    { rootNamespace: view.settings.rootNamespace, autoMtls: view.settings.autoMtls },
  );
  return { ...base, ...res };
}

export function describeWorkload(view: MeshView, w: Workload): WorkloadDescription {
  const outbound: OutboundRow[] = [];
  for (const s of view.services) for (const p of s.ports) outbound.push(outboundTo(view, w, s, p));
  return {
    namespace: w.namespace,
    name: w.name,
    ...(w.deployment ? { deployment: w.deployment } : {}),
    serviceAccount: w.serviceAccount,
    spiffeId: spiffeId({ trustDomain: view.settings.trustDomain, namespace: w.namespace, serviceAccount: w.serviceAccount }),
    sidecar: w.sidecar,
    injection: w.injection,
    rootNamespace: view.settings.rootNamespace,
    autoMtls: view.settings.autoMtls,
    ...(view.settings.smcp
      ? { controlPlane: { ...view.settings.smcp, dataPlaneMtls: view.settings.dataPlaneMtls, controlPlaneMtls: view.settings.controlPlaneMtls } }
      : {}),
    inbound: w.sidecar ? inboundOf(view, w) : undefined,
    outbound,
  };
}
