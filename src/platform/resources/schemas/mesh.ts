// Mesh resources (docs/mesh.md): ServiceMeshControlPlane, ServiceMeshMemberRoll,
// PeerAuthentication, DestinationRule, with upstream (Maistra / Istio) field names; and strait's
// MeshTrafficObservation (what the sidecars saw; written by the mesh agent).
import { anyObject, arr, bool, enumOf, int, ipv4, kindSchema, map, obj, port, str, timestamp, type Schema } from './builders.js';

const mtlsMode = enumOf('UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT');
const tls = obj({
  mode: enumOf('DISABLE', 'SIMPLE', 'MUTUAL', 'ISTIO_MUTUAL'),
  clientCertificate: str(),
  privateKey: str(),
  caCertificates: str(),
  credentialName: str(),
  subjectAltNames: arr(str()),
  sni: str(),
  insecureSkipVerify: bool,
});
const effectiveMode = enumOf('DISABLE', 'PERMISSIVE', 'STRICT');
/** the most flows one MeshTrafficObservation holds (the agent's bound is at most this) */
export const MAX_OBSERVED_FLOWS = 1024;
const observedFlow = obj(
  {
    client: obj({ address: str(), identity: str(), namespace: str(), pod: str(), serviceAccount: str(), sidecar: bool }, ['address']),
    port,
    tls: enumOf('mtls', 'plaintext', 'tls-passthrough', 'tls'),
    outcome: enumOf('accepted', 'reset'),
    reason: str(),
    mode: effectiveMode,
    count: int(0),
    firstSeen: timestamp,
    lastSeen: timestamp,
    strictWouldReset: bool,
  },
  ['client', 'port', 'tls', 'outcome', 'mode', 'count', 'lastSeen'],
);

const trafficPolicy = obj({
  tls,
  portLevelSettings: arr(obj({ port: obj({ number: port }), tls, loadBalancer: anyObject, connectionPool: anyObject, outlierDetection: anyObject })),
  loadBalancer: anyObject,
  connectionPool: anyObject,
  outlierDetection: anyObject,
  tunnel: anyObject,
});

export const meshSchemas: Record<string, Schema> = {
  ServiceMeshControlPlane: kindSchema({
    spec: obj({
      version: str(),
      security: obj({
        dataPlane: obj({ mtls: bool, automtls: bool }),
        controlPlane: obj({ mtls: bool, tls: anyObject }),
        identity: anyObject,
        certificateAuthority: anyObject,
        trust: anyObject,
        manageNetworkPolicy: bool,
      }),
      tracing: anyObject,
      addons: anyObject,
      gateways: anyObject,
      proxy: anyObject,
      general: anyObject,
      policy: anyObject,
      telemetry: anyObject,
      profiles: arr(str()),
      cluster: anyObject,
      runtime: anyObject,
      techPreview: anyObject,
    }),
    status: anyObject,
  }),
  ServiceMeshMemberRoll: kindSchema({
    spec: obj({ members: arr(str()), memberSelectors: arr(anyObject) }),
    status: anyObject,
  }),
  PeerAuthentication: kindSchema({
    spec: obj({
      selector: obj({ matchLabels: map() }),
      mtls: obj({ mode: mtlsMode }),
      portLevelMtls: map(obj({ mode: mtlsMode })),
    }),
    status: anyObject,
  }),
  DestinationRule: kindSchema(
    {
      spec: obj(
        {
          host: str({ minLength: 1, description: 'a non-empty service host, such as echo.mesh.svc.cluster.local or *' }),
          trafficPolicy,
          subsets: arr(obj({ name: str(), labels: map(), trafficPolicy }, ['name'])),
          exportTo: arr(str()),
          workloadSelector: obj({ matchLabels: map() }),
        },
        ['host'],
      ),
      status: anyObject,
    },
    { required: ['spec'] },
  ),
  MeshTrafficObservation: kindSchema({
    spec: obj({ pod: str(), deployment: str(), serviceAccount: str(), spiffeId: str(), address: ipv4 }),
    status: obj({
      lastReport: timestamp,
      flowLimit: int(1, MAX_OBSERVED_FLOWS),
      evictedFlows: int(0),
      inbound: anyObject,
      summary: obj({ flows: int(0), mtls: int(0), plaintext: int(0), tlsPassthrough: int(0), reset: int(0), strictWouldReset: int(0) }),
      flows: arr(observedFlow, { maxItems: MAX_OBSERVED_FLOWS }),
    }),
  }),
};
