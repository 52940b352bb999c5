// A snapshot of everything mesh policy depends on, built from plain resources (a store
// list, or manifests loaded from files): the control-plane settings, the members, the
// workloads (pods; a Deployment without pods counts as one pod named after it), the
// services and the PeerAuthentications / DestinationRules in force (with the generated ones).
import { parseIpv4 } from '../../../base/config/index.js';
import { INJECT_KEY } from '../../../platform/resources/index.js';
import type { KubeObject } from '../../../platform/store/index.js';
import { controlPlaneSettings, generatedPolicies, type ControlPlaneSettings } from './control-plane.js';
import { serviceFqdn } from './host.js';
import { readDestinationRule, readPeerAuthentication, type InvalidPolicy } from './parse.js';
import type { DestinationRule, PeerAuthentication, ServiceMeshControlPlane } from './types.js';

export interface Workload {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  serviceAccount: string;
  ip?: string;
  /** container ports and the target ports of services that select it */
  ports: number[];
  /** runs a sidecar: injection asked for (label over annotation) in a member namespace */
  sidecar: boolean;
  /** why it has or lacks a sidecar */
  injection: string;
  /** true for a Deployment standing in for its pods */
  fromDeployment?: boolean;
  /** the Deployment a pod belongs to (its selector matches the pod's labels) */
  deployment?: string;
  /** the pod's network namespace in the local world (annotation strait.dev/netns) */
  netns?: string;
  /** the node the pod runs on (spec.nodeName) */
  node?: string;
}

export const NETNS_ANNOTATION = 'strait.dev/netns';

export interface ServicePort {
  port: number;
  targetPort: number;
  name?: string;
}

export interface MeshService {
  namespace: string;
  name: string;
  host: string;
  clusterIP?: string;
  selector: Record<string, string>;
  ports: ServicePort[];
}

export interface MeshView {
  settings: ControlPlaneSettings;
  members: Set<string>;
  namespaces: Set<string>;
  workloads: Workload[];
  services: MeshService[];
  peerAuthentications: PeerAuthentication[];
  destinationRules: DestinationRule[];
  /** policies that did not parse and what the mesh does instead (fail closed) */
  invalid: InvalidPolicy[];
}

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** a string map (labels, selectors): entries whose value is not a string are dropped */
const rec = (v: unknown): Record<string, string> => {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
};
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function injectionOf(labels: Record<string, string>, annotations: Record<string, string>, member: boolean): { sidecar: boolean; why: string } {
  const label = labels[INJECT_KEY];
  const ann = annotations[INJECT_KEY];
  const value = label ?? ann;
  const where =
    label !== undefined
      ? `label ${INJECT_KEY}=${JSON.stringify(label)}`
      : ann !== undefined
        ? `annotation ${INJECT_KEY}=${JSON.stringify(ann)}`
        : `no ${INJECT_KEY}`;
  if (value !== 'true') return { sidecar: false, why: where };
  if (!member) return { sidecar: false, why: `${where}, but the namespace is not a mesh member` };
  return { sidecar: true, why: where };
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function containerPorts(podSpec: Record<string, unknown> | undefined): number[] {
  const out: number[] = [];
  for (const c of list(podSpec?.['containers'])) {
    for (const p of list(obj(c)['ports'])) {
      const n = obj(p)['containerPort'];
      if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535) out.push(n);
    }
  }
  return out;
}

type KindsOf = (kind: string) => Obj[];

/** Every namespace an object names, and the mesh members among them (all of them for an implicit mesh). */
function meshNamespaces(objects: readonly KubeObject[], of: KindsOf, settings: MeshView['settings']): { namespaces: Set<string>; members: Set<string> } {
  const namespaces = new Set<string>();
  for (const o of objects) {
    if (o.kind === 'Namespace') namespaces.add(o.metadata.name);
    else if (o.metadata.namespace) namespaces.add(o.metadata.namespace);
  }
  const members = new Set<string>();
  if (settings.implicit) {
    for (const ns of namespaces) members.add(ns);
  } else {
    for (const roll of of('ServiceMeshMemberRoll')) {
      if (roll.metadata.namespace !== settings.rootNamespace) continue;
      for (const m of list(roll.spec?.['members'])) if (typeof m === 'string') members.add(m);
    }
    members.add(settings.rootNamespace);
  }
  return { namespaces, members };
}

function meshService(s: Obj): MeshService {
  const ports: ServicePort[] = list(s.spec?.['ports'])
    .map(obj)
    .flatMap((p) => {
      const port = p['port'];
      if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return [];
      // the sidecars carry TCP only: a UDP or SCTP port (kube-dns 53/UDP beside 53/TCP) has no TLS mode
      const protocol = str(p['protocol']) ?? 'TCP';
      if (protocol !== 'TCP') return [];
      const tp = p['targetPort'];
      return [{ port, targetPort: typeof tp === 'number' ? tp : port, ...(str(p['name']) ? { name: str(p['name']) as string } : {}) }];
    });
  const ns = s.metadata.namespace ?? 'default';
  const ip = parseIpv4(s.spec?.['clusterIP']);
  return {
    namespace: ns,
    name: s.metadata.name,
    host: serviceFqdn(s.metadata.name, ns),
    selector: rec(s.spec?.['selector']),
    ports,
    ...(ip ? { clusterIP: ip } : {}),
  };
}

function podWorkload(p: Obj, members: ReadonlySet<string>): Workload {
  const ns = p.metadata.namespace ?? 'default';
  const labels = rec(p.metadata.labels);
  const inj = injectionOf(labels, rec(p.metadata.annotations), members.has(ns));
  const ip = parseIpv4(p.status?.['podIP']);
  const netns = p.metadata.annotations?.[NETNS_ANNOTATION];
  const node = str(p.spec?.['nodeName']);
  return {
    namespace: ns,
    name: p.metadata.name,
    labels,
    serviceAccount: str(p.spec?.['serviceAccountName']) ?? 'default',
    ports: containerPorts(p.spec),
    sidecar: inj.sidecar,
    injection: inj.why,
    ...(ip ? { ip } : {}),
    ...(netns ? { netns } : {}),
    ...(node ? { node } : {}),
  };
}

/**
 * A Deployment names the pod workloads it owns (its selector, else its template's labels, over
 * the pods' labels); one with no pod of its template's labels yet is a workload of its own.
 */
function addDeployment(
  d: Obj,
  workloads: Workload[],
  podLabelsSeen: readonly { ns: string; labels: Record<string, string> }[],
  members: ReadonlySet<string>,
): void {
  const ns = d.metadata.namespace ?? 'default';
  const tpl = obj(d.spec?.['template']) as {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: Record<string, unknown>;
  };
  const labels = rec(tpl.metadata?.labels);
  const hasPods = podLabelsSeen.some((p) => p.ns === ns && Object.keys(labels).length > 0 && Object.entries(labels).every(([k, v]) => p.labels[k] === v));
  // the pods it owns: its selector (else its template's labels) over the pods' labels
  const selector = rec((d.spec?.['selector'] as { matchLabels?: unknown } | undefined)?.matchLabels);
  const match = Object.keys(selector).length > 0 ? selector : labels;
  if (Object.keys(match).length > 0) {
    for (const w of workloads) {
      if (w.namespace === ns && !w.fromDeployment && w.deployment === undefined && Object.entries(match).every(([k, v]) => w.labels[k] === v))
        w.deployment = d.metadata.name;
    }
  }
  if (hasPods) return;
  const inj = injectionOf(labels, rec(tpl.metadata?.annotations), members.has(ns));
  workloads.push({
    namespace: ns,
    name: d.metadata.name,
    labels,
    serviceAccount: str(tpl.spec?.['serviceAccountName']) ?? 'default',
    ports: containerPorts(tpl.spec),
    sidecar: inj.sidecar,
    injection: inj.why,
    fromDeployment: true,
  });
}

/** The operator's generated policies, then the user's (objects of the operator replace user objects of the same name). */
function meshPolicies(of: KindsOf, settings: MeshView['settings']): Pick<MeshView, 'peerAuthentications' | 'destinationRules' | 'invalid'> {
  const generated = generatedPolicies(settings);
  const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
  const genPa = new Set(generated.peerAuthentications.map(key));
  const genDr = new Set(generated.destinationRules.map(key));
  // objects of the operator replace user objects of the same name (the operator reconciles them)
  const invalid: InvalidPolicy[] = [];
  const peerAuthentications = [...generated.peerAuthentications];
  for (const p of of('PeerAuthentication') as PeerAuthentication[]) {
    if (genPa.has(key(p))) continue;
    const r = readPeerAuthentication(p);
    peerAuthentications.push(r.pa);
    if (r.invalid) invalid.push(r.invalid);
  }
  const destinationRules = [...generated.destinationRules];
  for (const d of of('DestinationRule') as DestinationRule[]) {
    if (genDr.has(key(d))) continue;
    const r = readDestinationRule(d);
    if (r.dr) destinationRules.push(r.dr);
    if (r.invalid) invalid.push(r.invalid);
  }
  return { peerAuthentications, destinationRules, invalid };
}

export function buildMeshView(objects: readonly KubeObject[]): MeshView {
  const of: KindsOf = (kind) => objects.filter((o) => o.kind === kind) as Obj[];
  const settings = controlPlaneSettings(of('ServiceMeshControlPlane') as ServiceMeshControlPlane[]);
  const { namespaces, members } = meshNamespaces(objects, of, settings);
  const services = of('Service').map(meshService);

  const workloads: Workload[] = [];
  const podLabelsSeen: { ns: string; labels: Record<string, string> }[] = [];
  for (const p of of('Pod')) {
    const w = podWorkload(p, members);
    podLabelsSeen.push({ ns: w.namespace, labels: w.labels });
    workloads.push(w);
  }
  for (const d of of('Deployment')) addDeployment(d, workloads, podLabelsSeen, members);
  // service target ports are workload ports too
  for (const w of workloads) {
    for (const s of servicesSelecting(services, w)) for (const p of s.ports) if (!w.ports.includes(p.targetPort)) w.ports.push(p.targetPort);
    w.ports.sort((a, b) => a - b);
  }
  return { settings, members, namespaces, workloads, services, ...meshPolicies(of, settings) };
}

export function servicesSelecting(services: readonly MeshService[], w: Workload): MeshService[] {
  return services.filter(
    (s) => s.namespace === w.namespace && Object.keys(s.selector).length > 0 && Object.entries(s.selector).every(([k, v]) => w.labels[k] === v),
  );
}

export function endpointsOf(view: MeshView, s: MeshService): Workload[] {
  return view.workloads.filter(
    (w) => w.namespace === s.namespace && Object.keys(s.selector).length > 0 && Object.entries(s.selector).every(([k, v]) => w.labels[k] === v),
  );
}

/**
 * A pod by its name, else a workload by its Deployment's name (as `istioctl x describe`
 * takes a workload): the Deployment's first pod by name, or the Deployment itself when it
 * has none. Every pod of a Deployment has the same labels, account and so the same policy.
 */
export function findWorkload(view: MeshView, namespace: string, name: string): Workload | undefined {
  const inNs = view.workloads.filter((w) => w.namespace === namespace);
  return inNs.find((w) => w.name === name) ?? inNs.filter((w) => w.deployment === name).sort((a, b) => a.name.localeCompare(b.name))[0];
}
