// KindRef -> REST path, from the kinds strait knows (src/platform/resources/kinds.ts).
// No discovery round trip: plurals and scope are declared there.
import { E } from '../../../base/errors/index.js';
import { Kinds, type KindInfo } from '../../resources/index.js';
import type { KindRef } from '../types.js';

export interface ResolvedKind {
  info: KindInfo;
  /** the apiVersion asked for (the preferred one or one of alsoServed) */
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** "/api/v1" or "/apis/<group>/<version>" */
  prefix: string;
}

const byKey = new Map<string, KindInfo>();
for (const info of Object.values(Kinds) as KindInfo[]) {
  for (const v of [info.apiVersion, ...(info.alsoServed ?? [])]) byKey.set(`${v}/${info.kind}`, info);
}

export function resolveKind(ref: KindRef): ResolvedKind {
  const info = byKey.get(`${ref.apiVersion}/${ref.kind}`);
  if (!info) throw E.kindUnknown(`${ref.apiVersion}/${ref.kind}`);
  const prefix = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
  return { info, apiVersion: ref.apiVersion, kind: info.kind, plural: info.plural, namespaced: info.namespaced, prefix };
}

/** "plural.group" (or "plural" for the core group), as kubectl and CRD names spell a resource. */
export function resourceName(k: ResolvedKind): string {
  const slash = k.apiVersion.indexOf('/');
  return slash < 0 ? k.plural : `${k.plural}.${k.apiVersion.slice(0, slash)}`;
}

/** Collection path; namespace undefined = all namespaces (namespaced kinds). */
export function collectionPath(k: ResolvedKind, namespace?: string): string {
  if (k.namespaced && namespace !== undefined) return `${k.prefix}/namespaces/${encodeURIComponent(namespace)}/${k.plural}`;
  return `${k.prefix}/${k.plural}`;
}

/** Object path; namespaced kinds default to the "default" namespace. */
export function objectPath(k: ResolvedKind, name: string, namespace?: string, sub?: 'status'): string {
  const base = collectionPath(k, k.namespaced ? (namespace ?? 'default') : undefined);
  return `${base}/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}`;
}
