// Exports of one service from several clusters form one logical service. This folds the
// per-cluster EndpointSlices on the broker into the aggregated ServiceImport, by the MCS
// API's rule (KEP-1645): on conflicting types, ports, session affinity, traffic policy,
// exported labels or annotations the oldest export wins, and every constituent export
// reports Conflict. Ports are the union of the constituents' (a port another cluster adds
// is kept, and reported as a conflict; one that clashes by name or number is left out).
import type { KubeObject } from '../../../platform/store/index.js';
import { ANN_EXPORT_CREATED, ANN_SERVICE_PROPS, ANN_SERVICE_TYPE, LABEL_SOURCE_CLUSTER } from './names.js';

export type ImportType = 'ClusterSetIP' | 'Headless';

export interface ServicePort {
  name?: string;
  protocol: string;
  port: number;
}

export interface SliceEndpoint {
  addresses: string[];
  hostname?: string;
  conditions?: { ready?: boolean };
}

/** What the ServiceImport takes from the winning export besides type and ports. */
export interface ServiceProps {
  sessionAffinity?: string;
  sessionAffinityConfig?: unknown;
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
  ipFamilies?: string[];
  /** the ServiceExport's spec.exportedLabels / exportedAnnotations */
  exportedLabels?: Record<string, string>;
  exportedAnnotations?: Record<string, string>;
}

export type ConflictReason =
  | 'ConflictingType'
  | 'ConflictingPorts'
  | 'ConflictingSessionAffinity'
  | 'ConflictingTrafficPolicy'
  | 'ConflictingLabels'
  | 'ConflictingAnnotations';

export interface ClusterExport {
  cluster: string;
  props?: ServiceProps;
  /** ISO time the ServiceExport was created */
  created: string;
  type: ImportType;
  ports: ServicePort[];
  endpoints: SliceEndpoint[];
}

export interface Aggregate {
  type: ImportType;
  ports: ServicePort[];
  /** clusters whose endpoints the import carries (type-conflicting ones are left out), oldest first */
  clusters: string[];
  /** all constituent clusters, oldest first */
  constituents: string[];
  /** the oldest export's */
  props: ServiceProps;
  /** the first conflict's reason; the message names every conflicting field */
  conflict?: { reason: ConflictReason; message: string };
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** The properties annotation of a slice; what does not parse is left out. */
export function parseProps(text: string | undefined): ServiceProps {
  if (!text) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const r = raw as Record<string, unknown>;
  const out: ServiceProps = {};
  if (typeof r['sessionAffinity'] === 'string') out.sessionAffinity = r['sessionAffinity'];
  if (typeof r['sessionAffinityConfig'] === 'object' && r['sessionAffinityConfig'] !== null) out.sessionAffinityConfig = r['sessionAffinityConfig'];
  if (typeof r['internalTrafficPolicy'] === 'string') out.internalTrafficPolicy = r['internalTrafficPolicy'];
  if (typeof r['trafficDistribution'] === 'string') out.trafficDistribution = r['trafficDistribution'];
  if (Array.isArray(r['ipFamilies']) && r['ipFamilies'].every((f) => f === 'IPv4' || f === 'IPv6')) out.ipFamilies = r['ipFamilies'] as string[];
  if (isStringMap(r['exportedLabels'])) out.exportedLabels = r['exportedLabels'];
  if (isStringMap(r['exportedAnnotations'])) out.exportedAnnotations = r['exportedAnnotations'];
  return out;
}

/** JSON with sorted keys: equal maps compare equal whatever their order */
export const canon = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'object' && x !== null && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b))) : x,
  ) ?? 'null';

const portText = (p: ServicePort) => `${p.name ? `${p.name}/` : ''}${p.protocol}/${p.port}`;

export function exportFromSlice(slice: KubeObject): ClusterExport | undefined {
  const labels = slice.metadata.labels ?? {};
  const ann = slice.metadata.annotations ?? {};
  const cluster = labels[LABEL_SOURCE_CLUSTER];
  if (!cluster) return undefined;
  const type = ann[ANN_SERVICE_TYPE] === 'Headless' ? 'Headless' : 'ClusterSetIP';
  const ports = Array.isArray(slice['ports']) ? (slice['ports'] as ServicePort[]) : [];
  const endpoints = Array.isArray(slice['endpoints']) ? (slice['endpoints'] as SliceEndpoint[]) : [];
  return { cluster, created: ann[ANN_EXPORT_CREATED] ?? '', type, ports, endpoints, props: parseProps(ann[ANN_SERVICE_PROPS]) };
}

export function byAge(a: ClusterExport, b: ClusterExport): number {
  return a.created < b.created ? -1 : a.created > b.created ? 1 : a.cluster.localeCompare(b.cluster);
}

export function aggregate(exports: ClusterExport[]): Aggregate | undefined {
  const sorted = [...exports].sort(byAge);
  const oldest = sorted[0];
  if (!oldest) return undefined;
  const ports: ServicePort[] = oldest.ports.map((p) => ({ ...p }));
  const clusters = [oldest.cluster];
  const typeConflicts: string[] = [];
  const portConflicts: string[] = [];
  for (const e of sorted.slice(1)) {
    if (e.type !== oldest.type) {
      typeConflicts.push(`${e.cluster} (${e.type})`);
      continue;
    }
    clusters.push(e.cluster);
    for (const p of e.ports) {
      const same = ports.find((q) => (p.name ?? '') === (q.name ?? '') && (p.name ? true : q.port === p.port && q.protocol === p.protocol));
      if (same) {
        if (same.port !== p.port || same.protocol !== p.protocol) portConflicts.push(`${e.cluster} ${portText(p)} vs ${portText(same)}`);
        continue;
      }
      const clash = ports.find((q) => q.port === p.port && q.protocol === p.protocol);
      if (clash) {
        portConflicts.push(`${e.cluster} ${portText(p)} vs ${portText(clash)}`);
        continue;
      }
      ports.push({ ...p });
    }
  }
  const props = oldest.props ?? {};
  const differ = (pick: (p: ServiceProps) => unknown): string[] =>
    sorted
      .slice(1)
      .filter((e) => e.type === oldest.type && canon(pick(e.props ?? {})) !== canon(pick(props)))
      .map((e) => e.cluster);
  // a constituent whose ports are not the oldest's: the union is used, the difference reported
  const portSets = sorted
    .slice(1)
    .filter((e) => e.type === oldest.type && canon([...e.ports].map(portText).sort()) !== canon([...oldest.ports].map(portText).sort()))
    .map((e) => e.cluster);
  const conflicts: { reason: ConflictReason; text: string }[] = [];
  if (typeConflicts.length > 0) {
    conflicts.push({
      reason: 'ConflictingType',
      text: `the service type conflicts between clusters: ${oldest.cluster} exported it first as ${oldest.type}, which is used; ${typeConflicts.join(', ')} differ`,
    });
  }
  if (portConflicts.length > 0 || portSets.length > 0) {
    const detail = [...portConflicts, ...portSets.filter((c) => !portConflicts.some((x) => x.startsWith(`${c} `))).map((c) => `${c} exports other ports`)];
    conflicts.push({
      reason: 'ConflictingPorts',
      text: `the service ports conflict between clusters: the ports of ${oldest.cluster} (oldest export) are used, with the other clusters' ports that do not clash; conflicting: ${detail.join('; ')}`,
    });
  }
  const field = (reason: ConflictReason, what: string, pick: (p: ServiceProps) => unknown): void => {
    const d = differ(pick);
    if (d.length > 0) conflicts.push({ reason, text: `${what} of ${d.join(', ')} differ from ${oldest.cluster}'s (oldest export), which are used` });
  };
  field('ConflictingSessionAffinity', 'the session affinity settings', (p) => [p.sessionAffinity ?? 'None', p.sessionAffinityConfig ?? null]);
  field('ConflictingTrafficPolicy', 'the internal traffic policy and traffic distribution', (p) => [
    p.internalTrafficPolicy ?? null,
    p.trafficDistribution ?? null,
  ]);
  field('ConflictingLabels', 'the exported labels', (p) => p.exportedLabels ?? {});
  field('ConflictingAnnotations', 'the exported annotations', (p) => p.exportedAnnotations ?? {});
  const out: Aggregate = { type: oldest.type, ports, clusters, constituents: sorted.map((e) => e.cluster), props };
  if (conflicts.length > 0) {
    const text = conflicts.map((c) => c.text).join('; ');
    out.conflict = { reason: conflicts[0]!.reason, message: text.charAt(0).toUpperCase() + text.slice(1) };
  }
  return out;
}
