// The ingress gateway's configuration from the mesh resources: each route names a mesh
// service; the TLS toward it is resolved as for any client in the gateway's namespace (the
// gateway is a mesh proxy there), and the expected SPIFFE IDs are the service's endpoints'.
import type { IngressConfig, ProxyIdentity } from '../../dataplane/proxy/index.js';
import { spiffeId } from '../ca/index.js';
import { outboundTo, type MeshView, type Workload } from '../policy/index.js';

export interface IngressRouteSpec {
  pathPrefix: string;
  namespace: string;
  service: string;
  port: number;
  host?: string;
  /** connect here instead of the ClusterIP (an endpoint address reachable from the gateway) */
  backend?: { host: string; port: number };
}

export function ingressConfigFor(
  view: MeshView,
  routes: IngressRouteSpec[],
  gateway: { namespace: string; serviceAccount: string },
  identity?: ProxyIdentity,
): IngressConfig {
  const gw: Workload = {
    namespace: gateway.namespace,
    name: 'ingress-gateway',
    labels: {},
    serviceAccount: gateway.serviceAccount,
    ports: [],
    sidecar: true,
    injection: 'gateway',
  };
  return {
    ...(identity ? { identity } : {}),
    routes: routes.flatMap((r) => {
      const svc = view.services.find((s) => s.namespace === r.namespace && s.name === r.service);
      const port = svc?.ports.find((p) => p.port === r.port);
      if (!svc || !port) return [];
      const row = outboundTo(view, gw, svc, port);
      const backend = r.backend ?? (svc.clusterIP ? { host: svc.clusterIP, port: port.port } : undefined);
      if (!backend) return [];
      const sans = [
        ...new Set(row.endpoints.map((e) => spiffeId({ trustDomain: view.settings.trustDomain, namespace: svc.namespace, serviceAccount: e.serviceAccount }))),
      ];
      return [
        {
          pathPrefix: r.pathPrefix,
          service: `${svc.name}.${svc.namespace}`,
          backend,
          tls: row.mode === 'ISTIO_MUTUAL' ? { mode: 'ISTIO_MUTUAL' as const, sans } : { mode: 'DISABLE' as const },
          ...(r.host ? { host: r.host } : {}),
        },
      ];
    }),
  };
}
