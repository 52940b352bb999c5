// The mutation: pods that ask for a sidecar (label or annotation sidecar.istio.io/inject
// = "true", the key is configurable in resources/groups.ts) get the strait proxy
// container and the init container that redirects their traffic to it, as JSON Patch
// operations (RFC 6902) for an AdmissionReview response. Idempotent: a pod that already
// has the proxy gets no patch.
import { SIDECAR_NODE_FLAGS } from '../../dataplane/proxy/index.js';
import { INJECT_KEY } from '../../../platform/resources/index.js';
import { ROOT_CERT_CONFIGMAP as ROOT_CERT_CONFIGMAP_NAME } from '../ca/index.js';

export interface SidecarOptions {
  /** image of the proxy and init containers */
  image: string;
  /** inbound / outbound redirect ports (Istio's numbers by default) */
  inboundPort?: number;
  outboundPort?: number;
  /** UID the proxy runs as; its own traffic is not redirected */
  proxyUid?: number;
  /**
   * Kubernetes mode: the control module's mesh configuration service (https://HOST:PORT). The
   * proxy takes its configuration from there with a projected ServiceAccount token (audience
   * `strait`, volume strait-token) and verifies it against the mesh root (ConfigMap
   * istio-ca-root-cert, volume strait-root); without it the proxy runs unconfigured.
   */
  control?: string;
  /** is the namespace a member of the mesh? A pod elsewhere gets no sidecar (as OSSM); default: every namespace */
  inMesh?: (namespace: string) => boolean;
}

/**
 * Istio's annotation naming inbound ports that reach the application directly (kubelet's
 * HTTP probes of a STRICT pod, for example): handed to the init container's redirect.
 */
export const EXCLUDE_INBOUND_ANNOTATION = 'traffic.sidecar.istio.io/excludeInboundPorts';

/** The annotation's ports, when it is a comma-separated list of ports (else none: never a crash, the redirect stays whole). */
export function excludedInboundPorts(pod: PodLike): number[] {
  const v = pod.metadata?.annotations?.[EXCLUDE_INBOUND_ANNOTATION];
  if (typeof v !== 'string') return [];
  const parts = v
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (!parts.every((p) => /^[0-9]{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535)) return [];
  return [...new Set(parts.map(Number))];
}

/** where the injected volumes are mounted in the proxy container */
export const TOKEN_DIR = '/var/run/secrets/strait/token';
export const ROOT_DIR = '/var/run/secrets/strait/root';
/** the audience of the proxy's projected token (the mesh configuration service checks it) */
export const TOKEN_AUDIENCE = 'strait';
const METRICS_PORT = 15020;

export const PROXY_CONTAINER = 'strait-proxy';
export const INIT_CONTAINER = 'strait-init';
export const STATUS_ANNOTATION = INJECT_KEY.replace(/\/inject$/, '/status');

export interface JsonPatchOp {
  op: 'add';
  path: string;
  value: unknown;
}

interface PodLike {
  metadata?: { name?: string; generateName?: string; namespace?: string; labels?: Record<string, unknown>; annotations?: Record<string, unknown> };
  spec?: { containers?: { name?: string }[]; initContainers?: { name?: string }[]; volumes?: unknown[] };
}

const escape = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Does the pod ask for a sidecar? The label wins over the annotation, as in Istio. */
export function wantsSidecar(pod: PodLike): boolean {
  const label = pod.metadata?.labels?.[INJECT_KEY];
  if (label !== undefined) return label === 'true';
  return pod.metadata?.annotations?.[INJECT_KEY] === 'true';
}

/** The pod volumes the proxy needs in Kubernetes mode (its token, the mesh root). */
export function sidecarVolumes(): Record<string, unknown>[] {
  return [
    { name: 'strait-token', projected: { sources: [{ serviceAccountToken: { audience: TOKEN_AUDIENCE, expirationSeconds: 3600, path: 'token' } }] } },
    { name: 'strait-root', configMap: { name: ROOT_CERT_CONFIGMAP_NAME, optional: true } },
  ];
}

export function sidecarContainers(opts: SidecarOptions, excludeInbound: number[] = []): { proxy: Record<string, unknown>; init: Record<string, unknown> } {
  const inbound = opts.inboundPort ?? 15006;
  const outbound = opts.outboundPort ?? 15001;
  const uid = opts.proxyUid ?? 1337;
  const env = [
    { name: 'STRAIT_PROC', value: 'sidecar' },
    { name: 'STRAIT_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'STRAIT_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'STRAIT_SERVICE_ACCOUNT', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
  ];
  return {
    init: {
      name: INIT_CONTAINER,
      image: opts.image,
      command: ['node', 'dist/agents/sidecar/init.js'],
      args: [
        '--inbound-port',
        String(inbound),
        '--outbound-port',
        String(outbound),
        '--proxy-uid',
        String(uid),
        ...(excludeInbound.length ? ['--exclude-inbound-ports', excludeInbound.join(',')] : []),
      ],
      securityContext: {
        runAsUser: 0,
        runAsNonRoot: false,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'], add: ['NET_ADMIN', 'NET_RAW'] },
      },
    },
    proxy: {
      name: PROXY_CONTAINER,
      image: opts.image,
      command: ['node', ...SIDECAR_NODE_FLAGS, 'dist/agents/sidecar/main.js'],
      args: [
        '--inbound-port',
        String(inbound),
        '--outbound-port',
        String(outbound),
        '--metrics',
        `0.0.0.0:${METRICS_PORT}`,
        ...(opts.control ? ['--control', opts.control, '--control-token', `${TOKEN_DIR}/token`, '--control-ca', `${ROOT_DIR}/root-cert.pem`] : []),
      ],
      env,
      ports: [{ name: 'strait-metrics', containerPort: METRICS_PORT, protocol: 'TCP' }],
      ...(opts.control
        ? {
            volumeMounts: [
              { name: 'strait-token', mountPath: TOKEN_DIR, readOnly: true },
              { name: 'strait-root', mountPath: ROOT_DIR, readOnly: true },
            ],
          }
        : {}),
      securityContext: {
        runAsUser: uid,
        runAsGroup: uid,
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      },
      resources: { requests: { cpu: '10m', memory: '40Mi' }, limits: { memory: '256Mi' } },
    },
  };
}

/**
 * The JSON Patch that injects the sidecar, or [] when the pod does not ask, already has it,
 * or (opts.inMesh) its namespace (`namespace`: the AdmissionReview's) is not a mesh member.
 */
export function sidecarPatch(pod: PodLike, opts: SidecarOptions, namespace?: string): JsonPatchOp[] {
  if (!wantsSidecar(pod)) return [];
  const ns = namespace ?? pod.metadata?.namespace;
  if (opts.inMesh && ns !== undefined && !opts.inMesh(ns)) return [];
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  if (containers.some((c) => c?.name === PROXY_CONTAINER)) return [];
  const { proxy, init } = sidecarContainers(opts, excludedInboundPorts(pod));
  const ops: JsonPatchOp[] = [];
  if (Array.isArray(pod.spec?.initContainers) && pod.spec.initContainers.length > 0) ops.push({ op: 'add', path: '/spec/initContainers/-', value: init });
  else ops.push({ op: 'add', path: '/spec/initContainers', value: [init] });
  ops.push({ op: 'add', path: '/spec/containers/-', value: proxy });
  if (opts.control) {
    const vols = sidecarVolumes();
    if (Array.isArray(pod.spec?.volumes) && pod.spec.volumes.length > 0) for (const v of vols) ops.push({ op: 'add', path: '/spec/volumes/-', value: v });
    else ops.push({ op: 'add', path: '/spec/volumes', value: vols });
  }
  const status = JSON.stringify({ initContainers: [INIT_CONTAINER], containers: [PROXY_CONTAINER] });
  if (pod.metadata?.annotations && typeof pod.metadata.annotations === 'object') {
    ops.push({ op: 'add', path: `/metadata/annotations/${escape(STATUS_ANNOTATION)}`, value: status });
  } else {
    ops.push({ op: 'add', path: '/metadata/annotations', value: { [STATUS_ANNOTATION]: status } });
  }
  return ops;
}
