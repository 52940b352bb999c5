// Finding a kind: by apiVersion+kind (any served version), or by the names users type
// (plural, singular, short name or Kind, case-insensitive), as kubectl does.
import { E } from '../../base/errors/index.js';
import { Kinds, type KindInfo } from './kinds.js';

const ALL = Object.values(Kinds) as KindInfo[];

const byTyped = new Map<string, KindInfo>();
for (const info of ALL) {
  for (const n of [info.plural, info.singular, info.kind.toLowerCase(), ...info.shortNames]) byTyped.set(n.toLowerCase(), info);
}
// "kind.group" forms, e.g. "peerauthentications.security.istio.io", "endpoints.submariner.io"
for (const info of ALL) {
  const group = info.apiVersion.includes('/') ? info.apiVersion.split('/')[0]! : '';
  if (group) for (const n of [info.plural, info.singular]) byTyped.set(`${n}.${group}`.toLowerCase(), info);
}

const byApiVersionKind = new Map<string, KindInfo>();
for (const info of ALL) {
  for (const v of [info.apiVersion, ...(info.alsoServed ?? [])]) byApiVersionKind.set(`${v}|${info.kind}`, info);
}

/** Every kind strait knows. */
export function allKinds(): readonly KindInfo[] {
  return ALL;
}

/** The kind a user typed ("pods", "po", "Pod", "pa", "destinationrule"); STRAIT_ERR_KIND_UNKNOWN otherwise. */
export function findKind(typed: string): KindInfo {
  const info = byTyped.get(typed.toLowerCase());
  if (!info) throw E.kindUnknown(typed);
  return info;
}

/** The kind of an apiVersion/kind pair, for every served version; undefined when unknown. */
export function kindOf(apiVersion: string, kind: string): KindInfo | undefined {
  return byApiVersionKind.get(`${apiVersion}|${kind}`);
}
