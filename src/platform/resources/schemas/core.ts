// Core Kubernetes objects the local world needs (the fields strait reads and writes).
import {
  anyObject,
  arr,
  bool,
  condition,
  enumOf,
  int,
  intOrString,
  ipv4,
  ipv4Cidr,
  kindSchema,
  labelSelector,
  map,
  obj,
  port,
  protocol,
  str,
  timestamp,
  type Schema,
} from './builders.js';

const BASE64 = str({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description: 'base64 text (use stringData for plain text)' });

const container = obj(
  {
    name: str(),
    image: str(),
    command: arr(str()),
    args: arr(str()),
    workingDir: str(),
    ports: arr(obj({ name: str(), containerPort: port, protocol }, ['containerPort'])),
    env: arr(obj({ name: str(), value: str(), valueFrom: anyObject }, ['name'])),
    resources: anyObject,
  },
  ['name'],
);

export const podSpec: Schema = obj(
  {
    containers: arr(container, { minItems: 1 }),
    initContainers: arr(container),
    nodeName: str(),
    nodeSelector: map(),
    serviceAccountName: str(),
    hostNetwork: bool,
    restartPolicy: enumOf('Always', 'OnFailure', 'Never'),
    dnsPolicy: str(),
    dnsConfig: anyObject,
    volumes: arr(anyObject),
    tolerations: arr(anyObject),
  },
  ['containers'],
);

export const coreSchemas: Record<string, Schema> = {
  Namespace: kindSchema({ spec: obj({ finalizers: arr(str()) }), status: obj({ phase: enumOf('Active', 'Terminating') }) }, { nameRule: 'label' }),
  ConfigMap: kindSchema({ data: map(), binaryData: map(BASE64), immutable: bool }),
  Secret: kindSchema({ data: map(BASE64), stringData: map(), type: str(), immutable: bool }),
  Service: kindSchema(
    {
      spec: obj({
        type: enumOf('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'),
        clusterIP: str({
          pattern: '^(|None|(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3})$',
          description: 'an IPv4 address, "None" (headless) or empty',
        }),
        clusterIPs: arr(str()),
        ports: arr(obj({ name: str(), port, targetPort: intOrString, protocol, nodePort: int(1, 65535), appProtocol: str() }, ['port'])),
        selector: map(),
        externalName: str(),
        sessionAffinity: enumOf('None', 'ClientIP'),
        publishNotReadyAddresses: bool,
      }),
      status: anyObject,
    },
    { nameRule: 'label' },
  ),
  Pod: kindSchema({
    spec: podSpec,
    status: obj({
      phase: enumOf('Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'),
      podIP: ipv4,
      podIPs: arr(obj({ ip: str() }, ['ip'])),
      hostIP: ipv4,
      startTime: timestamp,
      conditions: arr(
        obj({ type: str(), status: enumOf('True', 'False', 'Unknown'), reason: str(), message: str(), lastTransitionTime: timestamp }, ['type', 'status']),
      ),
    }),
  }),
  Node: kindSchema({
    spec: obj({ podCIDR: ipv4Cidr, podCIDRs: arr(ipv4Cidr), unschedulable: bool, taints: arr(anyObject) }),
    status: obj({
      addresses: arr(obj({ type: str(), address: str() }, ['type', 'address'])),
      conditions: arr(anyObject),
    }),
  }),
  Event: kindSchema(
    {
      involvedObject: obj({ apiVersion: str(), kind: str(), name: str(), namespace: str(), uid: str() }, ['kind', 'name']),
      reason: str(),
      message: str(),
      type: enumOf('Normal', 'Warning'),
      count: int(1),
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      source: obj({ component: str(), host: str() }),
      reportingComponent: str(),
    },
    { required: ['involvedObject'] },
  ),
  EndpointSlice: kindSchema(
    {
      addressType: enumOf('IPv4', 'IPv6', 'FQDN'),
      endpoints: arr(
        obj(
          {
            addresses: arr(str(), { minItems: 1 }),
            conditions: obj({ ready: bool, serving: bool, terminating: bool }),
            hostname: str(),
            nodeName: str(),
            zone: str(),
            targetRef: anyObject,
          },
          ['addresses'],
        ),
      ),
      ports: arr(obj({ name: str(), port, protocol, appProtocol: str() })),
    },
    { required: ['addressType'] },
  ),
  Deployment: kindSchema({
    spec: obj(
      {
        replicas: int(0),
        selector: labelSelector,
        template: obj({ metadata: obj({ labels: map(), annotations: map() }), spec: podSpec }, ['spec']),
        strategy: anyObject,
        minReadySeconds: int(0),
      },
      ['selector', 'template'],
    ),
    status: obj({
      replicas: int(0),
      readyReplicas: int(0),
      availableReplicas: int(0),
      updatedReplicas: int(0),
      observedGeneration: int(0),
      conditions: arr(anyObject),
    }),
  }),
  Lease: kindSchema({
    spec: obj({ holderIdentity: str(), leaseDurationSeconds: int(1), acquireTime: str(), renewTime: str(), leaseTransitions: int(0) }),
  }),
};

export { condition };
