// Served versions of one kind (KindInfo.alsoServed) share one schema, so converting an
// object between them is setting its apiVersion (what a CRD with conversion strategy None
// does in the API server). The embedded store keeps every object in its kind's storage
// version and hands it out in the version it was asked for.
import { kindOf } from '../resources/index.js';
import type { KubeObject } from './types.js';

/** The object in `apiVersion`, when that is a served version of its kind; else as it is. */
export function inVersion<T extends KubeObject>(obj: T, apiVersion: string): T {
  if (typeof obj !== 'object' || obj === null || obj.apiVersion === apiVersion || typeof obj.apiVersion !== 'string') return obj;
  const info = kindOf(obj.apiVersion, obj.kind);
  if (!info || kindOf(apiVersion, obj.kind) !== info) return obj;
  return { ...obj, apiVersion };
}

/** The object in its kind's storage version. */
export function inStorageVersion<T extends KubeObject>(obj: T): T {
  if (typeof obj !== 'object' || obj === null || typeof obj.apiVersion !== 'string') return obj;
  const info = kindOf(obj.apiVersion, obj.kind);
  return info ? inVersion(obj, info.storageVersion ?? info.apiVersion) : obj;
}
