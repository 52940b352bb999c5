// Exports of one service from several clusters form one logical service. This folds the
// per-cluster EndpointSlices on the broker into the aggregated ServiceImport, by the MCS
// API's rule: on conflicting types or ports the oldest export wins, and every constituent
// export reports Conflict.
import type { KubeObject } from '../../../platform/store/index.js';
import { ANN_EXPORT_CREATED, ANN_SERVICE_TYPE, LABEL_SOURCE_CLUSTER } from './names.js';

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

export interface ClusterExport {
  cluster: string;
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
  conflict?: { reason: 'ConflictingType' | 'ConflictingPorts'; message: string };
}

const portText = (p: ServicePort) => `${p.name ? `${p.name}/` : ''}${p.protocol}/${p.port}`;

export function exportFromSlice(slice: KubeObject): ClusterExport | undefined {
  const labels = slice.metadata.labels ?? {};
  const ann = slice.metadata.annotations ?? {};
  const cluster = labels[LABEL_SOURCE_CLUSTER];
  if (!cluster) return undefined;
  const type = ann[ANN_SERVICE_TYPE] === 'Headless' ? 'Headless' : 'ClusterSetIP';
  const ports = Array.isArray(slice['ports']) ? (slice['ports'] as ServicePort[]) : [];
  const endpoints = Array.isArray(slice['endpoints']) ? (slice['endpoints'] as SliceEndpoint[]) : [];
  return { cluster, created: ann[ANN_EXPORT_CREATED] ?? '', type, ports, endpoints };
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
  const out: Aggregate = { type: oldest.type, ports, clusters, constituents: sorted.map((e) => e.cluster) };
  if (typeConflicts.length > 0) {
    out.conflict = {
      reason: 'ConflictingType',
      message: `The service type conflicts between clusters: ${oldest.cluster} exported it first as ${oldest.type}, which is used; ${typeConflicts.join(', ')} differ`,
    };
  } else if (portConflicts.length > 0) {
    out.conflict = {
      reason: 'ConflictingPorts',
      message: `The service ports conflict between clusters: the ports of ${oldest.cluster} (oldest export) are used; conflicting: ${portConflicts.join('; ')}`,
    };
  }
  return out;
}
