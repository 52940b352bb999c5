// Effective inbound mTLS mode of a workload, resolved exactly as Istio's
// ComposePeerAuthentication does (pilot/pkg/model/authentication.go):
//   - candidates: PeerAuthentications in the workload's namespace and in the root namespace;
//   - no selector (or empty matchLabels): mesh-wide in the root namespace, namespace-wide elsewhere;
//     with a selector: workload-level if its labels are a subset of the workload's, ignored in the root namespace;
//   - within each scope the oldest (creationTimestamp, then namespace/name) wins;
//   - PERMISSIVE to start with; mesh, then namespace, then workload override it unless UNSET;
//   - portLevelMtls comes only from the workload-level policy; an UNSET port inherits the workload mode.
import type { EffectiveMode, MtlsMode, PeerAuthentication, PolicySource } from './types.js';

export interface WorkloadRef {
  namespace: string;
  labels: Record<string, string>;
  /** the workload's ports (container ports, service target ports) */
  ports: number[];
}

export interface PortMode {
  port: number;
  mode: EffectiveMode;
  /** the policies that produced the mode, outermost first; the last one decided */
  sources: PolicySource[];
}

export interface InboundResolution {
  /** the workload-wide mode (ports without a port-level setting) */
  mode: EffectiveMode;
  sources: PolicySource[];
  ports: PortMode[];
  /** policies that matched but lost to an older one in the same scope */
  shadowed: PolicySource[];
}

const ORDER = (a: PeerAuthentication, b: PeerAuthentication): number => {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

export function modeOf(m: { mode?: MtlsMode } | undefined): MtlsMode {
  const v = m?.mode;
  return v === 'PERMISSIVE' || v === 'DISABLE' || v === 'STRICT' ? v : 'UNSET';
}

export function selectorOf(pa: PeerAuthentication): Record<string, string> | undefined {
  const ml = pa.spec?.selector?.matchLabels;
  return ml && Object.keys(ml).length > 0 ? ml : undefined;
}

export function labelsMatch(selector: Record<string, string>, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false;
  return true;
}

function src(pa: PeerAuthentication, scope: string): PolicySource {
  const generated = pa.metadata.annotations?.['strait.dev/generated-from'] !== undefined;
  return { kind: 'PeerAuthentication', namespace: pa.metadata.namespace ?? '', name: pa.metadata.name, scope, ...(generated ? { generated } : {}) };
}

export function resolveInbound(workload: WorkloadRef, policies: readonly PeerAuthentication[], rootNamespace: string): InboundResolution {
  const candidates = policies
    .filter((p) => p.metadata.namespace === workload.namespace || p.metadata.namespace === rootNamespace)
    .slice()
    .sort(ORDER);
  let mesh: PeerAuthentication | undefined;
  let ns: PeerAuthentication | undefined;
  let wl: PeerAuthentication | undefined;
  const shadowed: PolicySource[] = [];
  for (const p of candidates) {
    const sel = selectorOf(p);
    if (!sel) {
      if (p.metadata.namespace === rootNamespace) {
        if (!mesh) mesh = p;
        else shadowed.push(src(p, 'mesh'));
      } else if (!ns) ns = p;
      else shadowed.push(src(p, 'namespace'));
    } else if (p.metadata.namespace !== rootNamespace && labelsMatch(sel, workload.labels)) {
      if (!wl) wl = p;
      else shadowed.push(src(p, 'workload'));
    }
  }
  let mode: EffectiveMode = 'PERMISSIVE';
  const sources: PolicySource[] = [];
  if (mesh) {
    sources.push(src(mesh, 'mesh'));
    const m = modeOf(mesh.spec?.mtls);
    if (m !== 'UNSET') mode = m;
  }
  if (ns) {
    sources.push(src(ns, 'namespace'));
    const m = modeOf(ns.spec?.mtls);
    if (m !== 'UNSET') mode = m;
  }
  if (wl) {
    sources.push(src(wl, 'workload'));
    const m = modeOf(wl.spec?.mtls);
    if (m !== 'UNSET') mode = m;
  }
  const portLevel = wl?.spec?.portLevelMtls ?? {};
  const portSet = new Set<number>(workload.ports);
  for (const k of Object.keys(portLevel)) if (/^\d+$/.test(k)) portSet.add(Number(k));
  const ports: PortMode[] = [...portSet]
    .sort((a, b) => a - b)
    .map((port) => {
      const pl = portLevel[String(port)];
      if (wl && pl !== undefined) {
        const m = modeOf(pl);
        return { port, mode: m === 'UNSET' ? mode : m, sources: [...sources, { ...src(wl, 'port'), port }] };
      }
      return { port, mode, sources: [...sources] };
    });
  return { mode, sources, ports, shadowed };
}
