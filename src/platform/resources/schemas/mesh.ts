// Mesh resources (docs/mesh.md): ServiceMeshControlPlane, ServiceMeshMemberRoll,
// PeerAuthentication, DestinationRule, with upstream (Maistra / Istio) field names.
import { anyObject, arr, bool, enumOf, kindSchema, map, obj, port, str, type Schema } from './builders.js';

const mtlsMode = enumOf('UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT');
const tls = obj({
  mode: enumOf('DISABLE', 'SIMPLE', 'MUTUAL', 'ISTIO_MUTUAL'),
  clientCertificate: str(), privateKey: str(), caCertificates: str(), credentialName: str(),
  subjectAltNames: arr(str()), sni: str(), insecureSkipVerify: bool,
});
const trafficPolicy = obj({
  tls,
  portLevelSettings: arr(obj({ port: obj({ number: port }), tls, loadBalancer: anyObject, connectionPool: anyObject, outlierDetection: anyObject })),
  loadBalancer: anyObject, connectionPool: anyObject, outlierDetection: anyObject, tunnel: anyObject,
});

export const meshSchemas: Record<string, Schema> = {
  ServiceMeshControlPlane: kindSchema({
    spec: obj({
      version: str(),
      security: obj({
        dataPlane: obj({ mtls: bool, automtls: bool }),
        controlPlane: obj({ mtls: bool, tls: anyObject }),
        identity: anyObject, certificateAuthority: anyObject, trust: anyObject, manageNetworkPolicy: bool,
      }),
      tracing: anyObject, addons: anyObject, gateways: anyObject, proxy: anyObject, general: anyObject, policy: anyObject,
      telemetry: anyObject, profiles: arr(str()), cluster: anyObject, runtime: anyObject, techPreview: anyObject,
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
  DestinationRule: kindSchema({
    spec: obj({
      host: str({ minLength: 1, description: 'a non-empty service host, such as echo.mesh.svc.cluster.local or *' }),
      trafficPolicy,
      subsets: arr(obj({ name: str(), labels: map(), trafficPolicy }, ['name'])),
      exportTo: arr(str()),
      workloadSelector: obj({ matchLabels: map() }),
    }, ['host']),
    status: anyObject,
  }, { required: ['spec'] }),
};
