// What each view shows, derived from the live objects: the same records `strait show`,
// `strait get` and `strait mesh` read. Pure functions of a Live.
import type { Obj } from './api';
import { CONFIG } from './config';
import type { Live, Rate } from './live';
import { destinationText } from './words';

type R = Record<string, unknown>;
const rec = (v: unknown): R => (v && typeof v === 'object' && !Array.isArray(v) ? (v as R) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const byName = (a: { name: string }, b: { name: string }): number => a.name.localeCompare(b.name);

export const clustersOf = (all: string[]): string[] => all.filter((c) => c !== 'broker');

// ---------------------------------------------------------------- topology

export interface TopoNode {
  name: string;
  role: string;
  ready: boolean;
  gateway?: TopoGateway;
}
export interface TopoGateway {
  node: string;
  haStatus: string;
  summary: string;
}
export interface Tunnel {
  cluster: string;
  gateway: string;
  peer: string;
  remoteIP: string;
  status: string;
  statusMessage: string;
  /** why the status is not `connected` (psk-mismatch, loss 100%, ...), as `strait show connections` prints it */
  reason: string;
  /** the share of probes lost over the last 10 s ("26.8%"); '' when the gateway reports none */
  loss: string;
  rttAvg: string;
  rate: Rate | undefined;
  txBytes: number | undefined;
  rxBytes: number | undefined;
}
export interface TopoCluster {
  name: string;
  clusterCIDRs: string[];
  serviceCIDRs: string[];
  joined: boolean;
  nodes: TopoNode[];
  gateways: TopoGateway[];
}
export interface Problem {
  severity: 'error' | 'warning';
  what: string;
  detail: string;
}
export interface Topology {
  clusters: TopoCluster[];
  tunnels: Tunnel[];
  broker: boolean;
  problems: Problem[];
}

export function topology(live: Live, all: string[]): Topology {
  const broker = all.includes('broker');
  const joined = new Map(live.list('broker', 'Cluster').map((c) => [str(rec(c.spec)['cluster_id']) || c.metadata.name, c]));
  const problems: Problem[] = [];
  const tunnels: Tunnel[] = [];
  const clusters = clustersOf(all).map((name): TopoCluster => {
    const gateways = live.list(name, 'Gateway').map((g): TopoGateway => {
      const s = { ...rec(g.spec), ...rec(g.status) };
      return { node: str(s['node']) || g.metadata.name, haStatus: str(s['haStatus']) || 'unknown', summary: str(s['summary']) };
    });
    for (const g of live.list(name, 'Gateway')) {
      const s = { ...rec(g.spec), ...rec(g.status) };
      const node = str(s['node']) || g.metadata.name;
      for (const c of Array.isArray(s['connections']) ? (s['connections'] as unknown[]) : []) {
        const x = rec(c);
        const peer = str(x['cluster']);
        tunnels.push({
          cluster: name,
          gateway: node,
          peer,
          remoteIP: str(x['remoteIP']),
          status: str(x['status']) || 'unknown',
          statusMessage: str(x['statusMessage']),
          reason: str(x['reason']),
          loss: str(x['loss']),
          rttAvg: str(x['rttAvg']),
          rate: live.rate(name, node, peer),
          txBytes: typeof x['txBytes'] === 'number' ? x['txBytes'] : undefined,
          rxBytes: typeof x['rxBytes'] === 'number' ? x['rxBytes'] : undefined,
        });
      }
    }
    const nodes = live
      .list(name, 'Node')
      .map((n): TopoNode => {
        const labels = n.metadata.labels ?? {};
        const role =
          Object.keys(labels)
            .find((l) => l.startsWith('node-role.kubernetes.io/'))
            ?.slice('node-role.kubernetes.io/'.length) ?? (labels['submariner.io/gateway'] === 'true' ? 'gateway' : 'worker');
        const conds = Array.isArray(rec(n.status)['conditions']) ? (rec(n.status)['conditions'] as R[]) : [];
        const readyCond = conds.find((c) => c['type'] === 'Ready');
        const gw = gateways.find((g) => g.node === n.metadata.name);
        return { name: n.metadata.name, role, ready: readyCond ? readyCond['status'] === 'True' : true, ...(gw ? { gateway: gw } : {}) };
      })
      .sort(byName);
    const c = joined.get(name);
    const spec = rec(c?.spec);
    return { name, clusterCIDRs: strs(spec['cluster_cidr']), serviceCIDRs: strs(spec['service_cidr']), joined: Boolean(c), nodes, gateways };
  });
  for (const c of clusters) {
    if (broker && live.has('broker', 'Cluster') && !c.joined)
      problems.push({ severity: 'error', what: `${c.name} has not joined the broker`, detail: 'no Cluster record of it on the broker' });
    if (c.gateways.length > 0 && !c.gateways.some((g) => g.haStatus === 'active')) {
      problems.push({
        severity: 'error',
        what: `${c.name} has no active gateway`,
        detail: c.gateways.map((g) => `${g.node}: ${g.haStatus} (${g.summary})`).join('; '),
      });
    }
    for (const g of c.gateways.filter((x) => x.haStatus !== 'active')) {
      problems.push({ severity: 'warning', what: `gateway ${c.name}/${g.node} is ${g.haStatus}`, detail: g.summary });
    }
  }
  for (const t of tunnels) {
    if (t.status !== 'connected')
      problems.push({ severity: 'error', what: `tunnel ${t.cluster} → ${t.peer} is ${tunnelStatusText(t)}`, detail: t.statusMessage });
    else if (lossPercent(t) > 0)
      problems.push({ severity: 'warning', what: `tunnel ${t.cluster} → ${t.peer} loses ${t.loss} of its probes`, detail: 'connected, but degraded' });
  }
  // refusals recorded on the broker (a join whose CIDRs overlap a joined cluster's)
  for (const e of live.list('broker', 'Event')) {
    if (e['type'] !== 'Warning') continue;
    const io = rec(e['involvedObject']);
    problems.push({ severity: 'error', what: `${str(e['reason'])}: ${str(io['kind'])} ${str(io['name'])}`, detail: str(e['message']) });
  }
  return { clusters, tunnels: tunnels.sort((a, b) => `${a.cluster}/${a.peer}`.localeCompare(`${b.cluster}/${b.peer}`)), broker, problems };
}

// ---------------------------------------------------------------- services

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
export interface ExportRow {
  cluster: string;
  namespace: string;
  name: string;
  conditions: Condition[];
}
export interface ImportRow {
  cluster: string;
  namespace: string;
  name: string;
  type: string;
  ports: string;
  backing: string[];
  dnsNames: string[];
}
export interface ServiceRow {
  namespace: string;
  name: string;
  exports: ExportRow[];
  importedIn: string[];
  backing: string[];
  dnsNames: string[];
}
export interface Services {
  services: ServiceRow[];
  imports: Map<string, ImportRow[]>;
  exportable: Map<string, string[]>;
}

const conditionsOf = (o: Obj): Condition[] =>
  (Array.isArray(rec(o.status)['conditions']) ? (rec(o.status)['conditions'] as R[]) : []).map((c) => ({
    type: str(c['type']),
    status: str(c['status']),
    reason: str(c['reason']),
    message: str(c['message']),
  }));

export const dnsNames = (namespace: string, name: string, backing: string[]): string[] => [
  `${name}.${namespace}.svc.clusterset.local`,
  ...backing.map((c) => `${c}.${name}.${namespace}.svc.clusterset.local`),
];

export function services(live: Live, all: string[]): Services {
  const rows = new Map<string, ServiceRow>();
  const row = (ns: string, name: string): ServiceRow => {
    const k = `${ns}/${name}`;
    let r = rows.get(k);
    if (!r) rows.set(k, (r = { namespace: ns, name, exports: [], importedIn: [], backing: [], dnsNames: [] }));
    return r;
  };
  const imports = new Map<string, ImportRow[]>();
  const exportable = new Map<string, string[]>();
  for (const c of clustersOf(all)) {
    const exported = new Set<string>();
    for (const e of live.list(c, 'ServiceExport')) {
      const ns = e.metadata.namespace ?? 'default';
      exported.add(`${ns}/${e.metadata.name}`);
      row(ns, e.metadata.name).exports.push({ cluster: c, namespace: ns, name: e.metadata.name, conditions: conditionsOf(e) });
    }
    const list: ImportRow[] = [];
    for (const i of live.list(c, 'ServiceImport')) {
      const ns = i.metadata.namespace ?? 'default';
      const spec = rec(i.spec);
      const backing = (Array.isArray(rec(i.status)['clusters']) ? (rec(i.status)['clusters'] as R[]) : [])
        .map((x) => str(x['cluster']))
        .filter(Boolean)
        .sort();
      const ports = (Array.isArray(spec['ports']) ? (spec['ports'] as R[]) : [])
        .map((p) => `${str(p['port'])}/${str(p['protocol']) || 'TCP'}${p['name'] ? ` (${str(p['name'])})` : ''}`)
        .join(', ');
      list.push({
        cluster: c,
        namespace: ns,
        name: i.metadata.name,
        type: str(spec['type']) || 'ClusterSetIP',
        ports,
        backing,
        dnsNames: dnsNames(ns, i.metadata.name, backing),
      });
      const r = row(ns, i.metadata.name);
      r.importedIn.push(c);
      for (const b of backing) if (!r.backing.includes(b)) r.backing.push(b);
    }
    imports.set(c, list.sort(byName));
    exportable.set(
      c,
      live
        .list(c, 'Service')
        .filter((s) => s.metadata.namespace !== 'kube-system' && str(rec(s.spec)['type']) !== 'ExternalName')
        .map((s) => `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`)
        .filter((k) => !exported.has(k))
        .sort(),
    );
  }
  const out = [...rows.values()]
    .map((r) => ({ ...r, backing: r.backing.sort(), dnsNames: dnsNames(r.namespace, r.name, r.backing.sort()) }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  return { services: out, imports, exportable };
}

// ---------------------------------------------------------------- mesh

export interface PolicySource {
  kind: string;
  namespace: string;
  name: string;
  scope: string;
  generated?: boolean;
  port?: number;
}
export interface Inbound {
  mode: string;
  sources: PolicySource[];
  ports: { port: number; mode: string; sources: PolicySource[] }[];
  shadowed: PolicySource[];
}
export interface Flow {
  client: { address?: string; identity?: string; namespace?: string; pod?: string; serviceAccount?: string; sidecar?: boolean };
  port: number;
  tls: string;
  outcome: string;
  reason?: string;
  mode: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
  strictWouldReset: boolean;
}
export interface MeshWorkload {
  cluster: string;
  namespace: string;
  pod: string;
  deployment?: string;
  sidecar: 'yes' | 'no' | 'pending';
  identity?: string;
  inbound?: Inbound;
  flows: Flow[];
}
export interface MeshNamespace {
  cluster: string;
  name: string;
  policies: { name: string; mode: string; selector: boolean }[];
  workloads: MeshWorkload[];
}
/** flowsReported: some sidecar's traffic is in the store (a MeshTrafficObservation exists) */
export interface Mesh {
  namespaces: MeshNamespace[];
  flowsReported: boolean;
  injected: number;
  flowsError?: string;
}

const sidecarInjected = (p: Obj): boolean =>
  (p.metadata.annotations ?? {})['sidecar.istio.io/inject'] === 'true' || (p.metadata.labels ?? {})['sidecar.istio.io/inject'] === 'true';

export function mesh(live: Live, all: string[]): Mesh {
  const namespaces: MeshNamespace[] = [];
  let flowsReported = false;
  let injected = 0;
  let flowsError: string | undefined;
  for (const c of clustersOf(all)) {
    if (live.list(c, 'MeshTrafficObservation').length > 0) flowsReported = true;
    flowsError ??= live.error(c, 'MeshTrafficObservation');
    const mto = new Map(live.list(c, 'MeshTrafficObservation').map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
    const nsNames = new Set<string>(live.list(c, 'Namespace').map((n) => n.metadata.name));
    const pods = live.list(c, 'Pod');
    injected += pods.filter(sidecarInjected).length;
    for (const p of pods) nsNames.add(p.metadata.namespace ?? 'default');
    for (const ns of [...nsNames].sort()) {
      if (ns === 'kube-system' || ns === 'submariner-operator' || ns === CONFIG.namespace) continue;
      const policies = live
        .list(c, 'PeerAuthentication')
        .filter((pa) => pa.metadata.namespace === ns)
        .map((pa) => {
          const spec = rec(pa.spec);
          return {
            name: pa.metadata.name,
            mode: str(rec(spec['mtls'])['mode']) || 'UNSET',
            selector: Object.keys(rec(rec(spec['selector'])['matchLabels'])).length > 0,
          };
        })
        .sort(byName);
      const workloads = pods
        .filter((p) => (p.metadata.namespace ?? 'default') === ns)
        .map((p): MeshWorkload => {
          const o = mto.get(`${ns}/${p.metadata.name}`);
          const spec = rec(o?.spec);
          const st = rec(o?.status);
          const owner = p.metadata.ownerReferences?.find((r) => r.kind === 'Deployment' || r.kind === 'ReplicaSet')?.name;
          return {
            cluster: c,
            namespace: ns,
            pod: p.metadata.name,
            ...(str(spec['deployment']) || owner ? { deployment: str(spec['deployment']) || (owner as string) } : {}),
            sidecar: o ? 'yes' : sidecarInjected(p) ? 'pending' : 'no',
            ...(str(spec['spiffeId']) ? { identity: str(spec['spiffeId']) } : {}),
            ...(o && st['inbound'] ? { inbound: st['inbound'] as Inbound } : {}),
            flows: Array.isArray(st['flows']) ? (st['flows'] as Flow[]) : [],
          };
        })
        .sort((a, b) => a.pod.localeCompare(b.pod));
      if (workloads.length === 0 && policies.length === 0) continue;
      namespaces.push({ cluster: c, name: ns, policies, workloads });
    }
  }
  return { namespaces, flowsReported, injected, ...(flowsError && !flowsReported ? { flowsError } : {}) };
}

export const clientText = (f: Flow): string =>
  f.tls === 'mtls' && f.client.identity ? f.client.identity : f.client.pod ? `${f.client.namespace ?? ''}/${f.client.pod}` : (f.client.address ?? '?');

export const policyText = (s: PolicySource): string =>
  `${s.kind === 'PeerAuthentication' ? 'PA' : s.kind} ${s.namespace}/${s.name}${s.port !== undefined ? `:${s.port}` : ''} (${s.scope}${s.generated ? ', generated' : ''})`;

// ---------------------------------------------------------------- gitops

export interface Signature {
  status: string;
  keyID: string;
  primaryKeyID: string;
  signer: string;
  message: string;
  verifiedObject?: string;
  enforced?: boolean;
}
export interface AppRow {
  name: string;
  project: string;
  repoURL: string;
  path: string;
  targetRevision: string;
  destination: string;
  sync: string;
  health: string;
  /** the revision the target resolves to now (a refused one too) */
  revision: string;
  /** the last revision that synced, when it is another one than `revision` */
  lastGood: string;
  signature: Signature | undefined;
  phase: string;
  operationMessage: string;
  conditions: Condition[];
  history: { id: number; revision: string; deployedAt: string; signer?: string }[];
  reconciledAt: string;
}
export interface ProjectRow {
  name: string;
  sourceRepos: string[];
  destinations: string[];
  signatureKeys: string[];
}

function lastGoodOf(st: R, current: string): string {
  const history = Array.isArray(st['history']) ? (st['history'] as { revision?: string }[]) : [];
  const good = str(rec(rec(st['operationState'])['syncResult'])['revision']) || str(history.at(-1)?.revision);
  return good === current ? '' : good;
}

export function applications(live: Live): AppRow[] {
  return live
    .list(CONFIG.home, 'Application')
    .map((a): AppRow => {
      const spec = rec(a.spec);
      const src = rec(spec['source']);
      const dest = rec(spec['destination']);
      const st = rec(a.status);
      const op = rec(st['operationState']);
      return {
        name: a.metadata.name,
        project: str(spec['project']) || 'default',
        repoURL: str(src['repoURL']),
        path: str(src['path']),
        targetRevision: str(src['targetRevision']) || 'HEAD',
        destination: `${str(dest['server']) || str(dest['name'])} ${str(dest['namespace'])}`.trim(),
        sync: str(rec(st['sync'])['status']) || 'Unknown',
        health: str(rec(st['health'])['status']) || 'Unknown',
        // the control module reports the revision the target resolves to now, refused or not
        // (src/gitops/control/reconcile.ts); the last good one is the last successful sync's
        revision: str(rec(st['sync'])['revision']) || str(rec(rec(op['operation'])['sync'])['revision']),
        lastGood: lastGoodOf(st, str(rec(st['sync'])['revision'])),
        signature: st['signature'] ? (st['signature'] as Signature) : undefined,
        phase: str(op['phase']),
        operationMessage: str(op['message']),
        conditions: conditionsOf(a),
        history: (Array.isArray(st['history']) ? (st['history'] as AppRow['history']) : []).slice().reverse(),
        reconciledAt: str(st['reconciledAt']),
      };
    })
    .sort(byName);
}

export function projects(live: Live): ProjectRow[] {
  return live
    .list(CONFIG.home, 'AppProject')
    .map((p): ProjectRow => {
      const spec = rec(p.spec);
      return {
        name: p.metadata.name,
        sourceRepos: strs(spec['sourceRepos']),
        destinations: (Array.isArray(spec['destinations']) ? (spec['destinations'] as R[]) : []).map((d) =>
          destinationText(str(d['server']) || str(d['name']), str(d['namespace'])),
        ),
        signatureKeys: (Array.isArray(spec['signatureKeys']) ? (spec['signatureKeys'] as R[]) : []).map((k) => str(k['keyID'])),
      };
    })
    .sort(byName);
}

/** The signature verdict in words: the key and signer, or why it was refused. */
export function verdict(s: Signature | undefined): { ok: boolean; text: string } {
  if (!s) return { ok: false, text: 'not verified yet' };
  if (s.status === 'valid') return { ok: true, text: `signed by ${s.signer || 'unknown signer'} (key ${s.keyID})` };
  return { ok: false, text: s.message || s.status };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** a tunnel's status as `strait show connections` prints it: `error: psk-mismatch`, `connected (loss 26.8%)` */
export function tunnelStatusText(t: Pick<Tunnel, 'status' | 'reason' | 'loss'>): string {
  if (t.status !== 'connected') return t.reason ? `${t.status}: ${t.reason}` : t.status;
  return lossPercent(t) > 0 ? `${t.status} (loss ${t.loss})` : t.status;
}

function lossPercent(t: Pick<Tunnel, 'loss'>): number {
  const n = parseFloat(t.loss);
  return Number.isFinite(n) ? n : 0;
}
