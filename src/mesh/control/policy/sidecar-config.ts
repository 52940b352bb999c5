// The configuration pushed to one workload's sidecar, computed from a MeshView: inbound
// mode per port, and outbound TLS per destination address (ClusterIP:port for the service,
// podIP:targetPort per endpoint, so auto mTLS can decide per endpoint as Envoy does).
import type { OutboundPolicy, ProxyIdentity, SidecarConfig } from '../../dataplane/proxy/index.js';
import { spiffeId } from '../ca/index.js';
import { inboundOf, outboundTo } from './describe.js';
import type { MeshView, Workload } from './mesh-view.js';

function toPolicy(mode: string, sans: string[]): OutboundPolicy {
  // SIMPLE and MUTUAL are TLS the application originates itself; the sidecar passes it on.
  return mode === 'ISTIO_MUTUAL' ? { mode: 'ISTIO_MUTUAL', sans } : { mode: 'DISABLE' };
}

export function sidecarConfigFor(view: MeshView, w: Workload, identity?: ProxyIdentity): SidecarConfig {
  const inbound = inboundOf(view, w);
  const ports: Record<string, SidecarConfig['inbound']['defaultMode']> = {};
  for (const p of inbound.ports) ports[String(p.port)] = p.mode;
  const destinations: Record<string, OutboundPolicy> = {};
  const td = view.settings.trustDomain;
  for (const s of view.services) {
    for (const p of s.ports) {
      const row = outboundTo(view, w, s, p);
      const sans = [...new Set(row.endpoints.map((e) => spiffeId({ trustDomain: td, namespace: s.namespace, serviceAccount: e.serviceAccount })))];
      if (s.clusterIP && s.clusterIP !== 'None') destinations[`${s.clusterIP}:${p.port}`] = toPolicy(row.mode, sans);
      for (const e of row.endpoints) {
        if (!e.ip) continue;
        // per endpoint: a DestinationRule mode holds for all; auto mTLS looks at this endpoint only
        let mode: string = row.mode;
        if (row.reason.startsWith('auto-mtls')) mode = e.sidecar && e.inboundMode !== 'DISABLE' ? 'ISTIO_MUTUAL' : 'DISABLE';
        destinations[`${e.ip}:${p.targetPort}`] = toPolicy(mode, [spiffeId({ trustDomain: td, namespace: s.namespace, serviceAccount: e.serviceAccount })]);
      }
    }
  }
  return {
    ...(identity ? { identity } : {}),
    inbound: { defaultMode: inbound.mode, ports },
    // unknown destinations pass through as they are (Istio's PassthroughCluster)
    outbound: { default: { mode: 'DISABLE' }, destinations },
  };
}
