// What exists in a cluster of the world, as Kubernetes-shaped objects for its store:
// Namespaces, Nodes, Deployments, Pods (status.podIP, phase Running), Services
// (spec.clusterIP) and EndpointSlices.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../platform/store/index.js';
import { Kinds } from '../../platform/resources/index.js';
import { selectPods, type PlanCluster, type PlanService } from './plan.js';

const uid = (...parts: string[]): string => {
  const h = createHash('sha256').update(parts.join('/')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'strait-world' };
/** annotation on Nodes and Pods: the ip netns name inside the world (for nsenter --net=/run/netns/<name>) */
export const NETNS_ANNOTATION = 'strait.dev/netns';

export function clusterObjects(c: PlanCluster, startedAt: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const ns of c.namespaces) {
    out.push({
      apiVersion: Kinds.Namespace.apiVersion,
      kind: 'Namespace',
      metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns, ...MANAGED_BY } },
      spec: {},
      status: { phase: 'Active' },
    });
  }
  for (const n of c.nodes) {
    out.push(nodeObject(n, startedAt));
  }
  for (const d of c.deployments) {
    out.push({
      apiVersion: Kinds.Deployment.apiVersion,
      kind: 'Deployment',
      metadata: { name: d.name, namespace: d.namespace, labels: { ...d.labels, ...MANAGED_BY } },
      spec: {
        replicas: d.replicas,
        selector: { matchLabels: { ...d.labels } },
        template: {
          metadata: { labels: { ...d.labels }, ...(Object.keys(d.annotations).length ? { annotations: { ...d.annotations } } : {}) },
          spec: { containers: [{ name: d.name, image: d.image, ports: [{ containerPort: d.port, protocol: 'TCP' }] }] },
        },
      },
      status: { replicas: d.replicas, readyReplicas: d.replicas, availableReplicas: d.replicas, updatedReplicas: d.replicas },
    });
  }
  for (const p of c.pods) {
    out.push(podObject(c, p, startedAt));
  }
  for (const s of c.services) {
    out.push(serviceObject(s));
    out.push(endpointSliceObject(c, s));
  }
  return out;
}

/** A Node of the world: its role as a label, its netns, its underlay and public addresses. */
function nodeObject(n: PlanCluster['nodes'][number], startedAt: string): KubeObject {
  return {
    apiVersion: Kinds.Node.apiVersion,
    kind: 'Node',
    metadata: {
      name: n.name,
      labels: {
        ...MANAGED_BY,
        'kubernetes.io/hostname': n.name,
        [`node-role.kubernetes.io/${n.role}`]: '',
        ...(n.role === 'gateway' ? { 'submariner.io/gateway': 'true' } : {}),
      },
      annotations: { [NETNS_ANNOTATION]: n.netns },
    },
    spec: { podCIDR: n.podCIDR, podCIDRs: [n.podCIDR] },
    status: {
      addresses: [
        { type: 'InternalIP', address: n.underlayIP },
        ...(n.publicIP ? [{ type: 'ExternalIP', address: n.publicIP }] : []),
        { type: 'Hostname', address: n.name },
      ],
      conditions: [{ type: 'Ready', status: 'True', reason: 'StraitWorld', lastTransitionTime: startedAt }],
    },
  };
}

/** A Pod of the world, Running and Ready, owned by its Deployment when it has one. */
function podObject(c: PlanCluster, p: PlanCluster['pods'][number], startedAt: string): KubeObject {
  return {
    apiVersion: Kinds.Pod.apiVersion,
    kind: 'Pod',
    metadata: {
      name: p.name,
      namespace: p.namespace,
      labels: { ...p.labels, ...MANAGED_BY },
      annotations: { ...p.annotations, [NETNS_ANNOTATION]: p.netns },
      ...(p.deployment
        ? {
            ownerReferences: [
              {
                apiVersion: Kinds.Deployment.apiVersion,
                kind: 'Deployment',
                name: p.deployment,
                uid: uid(c.name, 'deploy', p.namespace, p.deployment),
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: {
      nodeName: p.node,
      containers: [
        {
          name: p.image.split('/')[1] ?? 'main',
          image: p.image,
          ...(p.image === 'strait/echo' ? { ports: [{ containerPort: p.port, protocol: 'TCP' }] } : {}),
        },
      ],
    },
    status: {
      phase: 'Running',
      podIP: p.ip,
      podIPs: [{ ip: p.ip }],
      hostIP: c.nodes.find((n) => n.name === p.node)?.underlayIP,
      startTime: startedAt,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: startedAt }],
    },
  };
}

function serviceObject(s: PlanService): KubeObject {
  return {
    apiVersion: Kinds.Service.apiVersion,
    kind: 'Service',
    metadata: { name: s.name, namespace: s.namespace, labels: { ...(s.name === 'kube-dns' ? { 'k8s-app': 'kube-dns' } : {}), ...MANAGED_BY } },
    spec: {
      type: 'ClusterIP',
      clusterIP: s.clusterIP ?? 'None',
      clusterIPs: s.clusterIP ? [s.clusterIP] : ['None'],
      ...(Object.keys(s.selector).length ? { selector: { ...s.selector } } : {}),
      ports: s.ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, targetPort: p.targetPort, protocol: p.protocol })),
    },
    status: {},
  };
}

function endpointSliceObject(c: PlanCluster, s: PlanService): KubeObject {
  const pods = selectPods(c, s);
  const endpoints = s.fixedEndpoints
    ? s.fixedEndpoints.map((ip) => ({ addresses: [ip], conditions: { ready: true } }))
    : pods.map((p) => ({
        addresses: [p.ip],
        conditions: { ready: true },
        nodeName: p.node,
        targetRef: { kind: 'Pod', name: p.name, namespace: p.namespace, uid: uid(c.name, 'pod', p.namespace, p.name) },
      }));
  return {
    apiVersion: Kinds.EndpointSlice.apiVersion,
    kind: 'EndpointSlice',
    metadata: {
      name: `${s.name}-world`,
      namespace: s.namespace,
      labels: { 'kubernetes.io/service-name': s.name, 'endpointslice.kubernetes.io/managed-by': 'strait-world', ...MANAGED_BY },
    },
    addressType: 'IPv4',
    endpoints,
    ports: s.ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.targetPort, protocol: p.protocol })),
  };
}
