// Small builders of mesh resources for the policy tests.
import type { KubeObject } from '../../src/platform/store/index.js';
import type { DestinationRule, MtlsMode, PeerAuthentication, TlsMode } from '../../src/mesh/control/index.js';

let tick = 0;
/** creation timestamps in the order the builders are called, unless given */
const ts = (t?: number): string => new Date(Date.UTC(2026, 0, 1) + (t ?? ++tick) * 1000).toISOString();

export function pa(
  ns: string,
  name: string,
  mode: MtlsMode | undefined,
  opts: { selector?: Record<string, string>; ports?: Record<string, MtlsMode | undefined>; t?: number } = {},
): PeerAuthentication {
  return {
    apiVersion: 'security.istio.io/v1beta1',
    kind: 'PeerAuthentication',
    metadata: { name, namespace: ns, creationTimestamp: ts(opts.t) },
    spec: {
      ...(opts.selector ? { selector: { matchLabels: opts.selector } } : {}),
      ...(mode ? { mtls: { mode } } : {}),
      ...(opts.ports ? { portLevelMtls: Object.fromEntries(Object.entries(opts.ports).map(([p, m]) => [p, m ? { mode: m } : {}])) } : {}),
    },
  };
}

export function dr(
  ns: string,
  name: string,
  host: string,
  mode: TlsMode | undefined,
  opts: { t?: number; exportTo?: string[]; portLevel?: { port: number; mode: TlsMode }[] } = {},
): DestinationRule {
  return {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'DestinationRule',
    metadata: { name, namespace: ns, creationTimestamp: ts(opts.t) },
    spec: {
      host,
      ...(opts.exportTo ? { exportTo: opts.exportTo } : {}),
      trafficPolicy: {
        ...(mode ? { tls: { mode } } : {}),
        ...(opts.portLevel ? { portLevelSettings: opts.portLevel.map((p) => ({ port: { number: p.port }, tls: { mode: p.mode } })) } : {}),
      },
    },
  };
}

export function smcp(ns: string, flags: { mtls?: boolean; automtls?: boolean; cp?: boolean }): KubeObject {
  return {
    apiVersion: 'maistra.io/v2',
    kind: 'ServiceMeshControlPlane',
    metadata: { name: 'basic', namespace: ns, creationTimestamp: ts(0) },
    spec: { security: { dataPlane: { mtls: flags.mtls, automtls: flags.automtls }, controlPlane: { mtls: flags.cp } } },
  };
}

export function smmr(ns: string, members: string[]): KubeObject {
  return { apiVersion: 'maistra.io/v1', kind: 'ServiceMeshMemberRoll', metadata: { name: 'default', namespace: ns }, spec: { members } };
}

export function pod(
  ns: string,
  name: string,
  opts: { labels?: Record<string, string>; inject?: 'label' | 'annotation' | 'label-false'; ip?: string; sa?: string; port?: number } = {},
): KubeObject {
  const labels: Record<string, string> = { ...(opts.labels ?? { app: name }) };
  const annotations: Record<string, string> = {};
  if (opts.inject === 'label') labels['sidecar.istio.io/inject'] = 'true';
  if (opts.inject === 'annotation') annotations['sidecar.istio.io/inject'] = 'true';
  if (opts.inject === 'label-false') {
    labels['sidecar.istio.io/inject'] = 'false';
    annotations['sidecar.istio.io/inject'] = 'true';
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels, annotations },
    spec: { serviceAccountName: opts.sa ?? name, containers: [{ name: 'c', ports: opts.port ? [{ containerPort: opts.port }] : [] }] },
    status: opts.ip ? { podIP: opts.ip } : {},
  };
}

export function svc(
  ns: string,
  name: string,
  port: number,
  opts: { selector?: Record<string, string>; targetPort?: number; clusterIP?: string } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns },
    spec: {
      selector: opts.selector ?? { app: name },
      ports: [{ port, targetPort: opts.targetPort ?? port }],
      ...(opts.clusterIP ? { clusterIP: opts.clusterIP } : {}),
    },
  };
}
