// Where an object lives in a store: its kind key (group + Kind, so that every served
// version of a kind names the same objects) and its namespace ("" for cluster-scoped).
import { E } from '../../base/errors/index.js';
import { Kinds, type KindInfo } from '../resources/index.js';
import type { KindRef, KubeObject } from './types.js';

export const groupOf = (apiVersion: string): string => {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
};

const known = new Map<string, KindInfo>();
for (const info of Object.values(Kinds) as KindInfo[]) known.set(`${groupOf(info.apiVersion)}/${info.kind}`, info);

export function kindKey(ref: KindRef): string {
  if (typeof ref?.apiVersion !== 'string' || typeof ref.kind !== 'string' || ref.apiVersion === '' || ref.kind === '') {
    throw E.usage(`a kind needs apiVersion and kind (got ${JSON.stringify(ref)})`, { kind: ref as unknown as Record<string, unknown> });
  }
  return `${groupOf(ref.apiVersion)}/${ref.kind}`;
}

/** The namespace an object of this kind is stored under: "" for cluster-scoped kinds, "default" when a namespaced kind has none. */
export function effectiveNamespace(key: string, namespace: string | undefined): string {
  const info = known.get(key);
  if (info && !info.namespaced) return '';
  if (namespace === undefined || namespace === '') return info ? 'default' : '';
  return namespace;
}

/** Namespace filter for list/watch: undefined = every namespace. */
export function namespaceFilter(key: string, namespace: string | undefined): string | undefined {
  if (namespace === undefined || namespace === '') return undefined;
  const info = known.get(key);
  return info && !info.namespaced ? undefined : namespace;
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function checkObjectShape(obj: KubeObject): void {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw E.usage('an object must be a JSON object with apiVersion, kind and metadata');
  kindKey(obj);
  const md = obj.metadata as unknown;
  if (typeof md !== 'object' || md === null || Array.isArray(md)) {
    throw E.usage(`${obj.kind} needs metadata with a name`, { kind: obj.kind });
  }
  const name = obj.metadata.name;
  if (typeof name !== 'string' || name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    throw E.usage(
      `${obj.kind} metadata.name ${JSON.stringify(name)} must be a DNS-1123 name (lowercase letters, digits, '-' and '.', at most 253 characters)`,
      { kind: obj.kind, name },
    );
  }
  const ns = obj.metadata.namespace;
  if (ns !== undefined && (typeof ns !== 'string' || (ns !== '' && (ns.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns))))) {
    throw E.usage(`${obj.kind} ${JSON.stringify(name)} metadata.namespace ${JSON.stringify(ns)} must be a DNS-1123 label`, {
      kind: obj.kind,
      name,
      namespace: ns,
    });
  }
}
