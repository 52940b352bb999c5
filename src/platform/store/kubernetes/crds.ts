// CustomResourceDefinitions for every kind strait declares that a plain cluster lacks
// (Argo CD, Istio, Maistra, MCS, Submariner groups). Generated from kinds.ts (names,
// plurals, short names, scope) and the ajv schemas of src/platform/resources/schemas
// (the same structural schemas `strait apply` validates with), so the API server
// enforces what the embedded store enforces. Every served version of a kind shares one
// schema, so the API server converts between them by the apiVersion alone (conversion
// strategy None, the default); the storage version is the kind's storageVersion. Every
// CRD has the status subresource so that apply never overwrites a controller's status, except Submariner's records (Cluster, Endpoint, Gateway), whose
// upstream CRDs have none: Submariner's gateway writes a Gateway's status with an update
// of the whole object, so strait's CRDs and Submariner's can stand in for each other.
import { GROUPS, Kinds, SCHEMAS, type KindInfo } from '../../resources/index.js';
import type { KubeObject } from '../types.js';

/** Groups that the API server serves itself. */
const BUILT_IN = new Set(['', 'apps', 'discovery.k8s.io', 'coordination.k8s.io']);

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');
const versionOf = (apiVersion: string): string => apiVersion.slice(apiVersion.indexOf('/') + 1);

/** Object schemas by kind (default: the resources module's SCHEMAS). */
export type SpecSchemas = Partial<Record<string, Record<string, unknown>>>;

const open = (description: string): object => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

/**
 * A schema without empty `properties` maps: Go's JSONSchemaProps omits them, so a CRD that
 * carried one would never equal itself read back, and a second server-side apply (Helm's
 * over kubectl's) would conflict on `.spec.versions`.
 */
function withoutEmptyProperties(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmptyProperties);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .filter(([k, x]) => !(k === 'properties' && x !== null && typeof x === 'object' && Object.keys(x).length === 0))
      .map(([k, x]) => [k, withoutEmptyProperties(x)]),
  );
}

/**
 * The CRD's openAPIV3Schema from an object schema: the kind's own fields as they are;
 * apiVersion/kind/metadata as the API server wants them in a CRD (only their types;
 * metadata's rules are the API server's own).
 */
function crdSchema(kind: string, group: string, schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const props = (schema?.['properties'] ?? {}) as Record<string, unknown>;
  const own = Object.fromEntries(Object.entries(props).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k)));
  const required = ((schema?.['required'] ?? []) as string[]).filter((k) => !['apiVersion', 'kind', 'metadata'].includes(k));
  return {
    type: 'object',
    description: `${kind} (${group}); managed by strait`,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: open(`desired state of the ${kind}`),
      status: open(`observed state of the ${kind}, written by strait's controllers`),
      ...own,
    },
    ...(required.length > 0 ? { required } : {}),
    ...(schema === undefined || schema['x-kubernetes-preserve-unknown-fields'] === true ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
  };
}

/** Kinds whose CRD has no status subresource (as upstream's): status is part of the object. */
const NO_STATUS_SUBRESOURCE = new Set(['Cluster', 'Endpoint', 'Gateway']);

/** Columns `kubectl get` shows. */
const COLUMNS: Partial<Record<string, { name: string; type: string; jsonPath: string }[]>> = {
  Application: [
    { name: 'Sync Status', type: 'string', jsonPath: '.status.sync.status' },
    { name: 'Health Status', type: 'string', jsonPath: '.status.health.status' },
  ],
  ServiceExport: [{ name: 'Valid', type: 'string', jsonPath: ".status.conditions[?(@.type=='Valid')].status" }],
  Gateway: [{ name: 'HA Status', type: 'string', jsonPath: '.status.haStatus' }],
  Endpoint: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.cluster_id' },
    { name: 'Hostname', type: 'string', jsonPath: '.spec.hostname' },
  ],
};

export function crdFor(info: KindInfo, schemas: SpecSchemas = SCHEMAS as SpecSchemas): KubeObject {
  const group = groupOf(info.apiVersion);
  const openAPIV3Schema = withoutEmptyProperties(crdSchema(info.kind, group, schemas[info.kind]));
  const versions = [info.apiVersion, ...(info.alsoServed ?? [])].map((av) => ({
    name: versionOf(av),
    served: true,
    storage: av === (info.storageVersion ?? info.apiVersion),
    // a JSON copy: no shared subtrees (which YAML would print as anchors)
    schema: { openAPIV3Schema: JSON.parse(JSON.stringify(openAPIV3Schema)) as Record<string, unknown> },
    ...(NO_STATUS_SUBRESOURCE.has(info.kind) && group === GROUPS.cluster ? {} : { subresources: { status: {} } }),
    ...(COLUMNS[info.kind]
      ? {
          additionalPrinterColumns: [...(COLUMNS[info.kind] ?? []), { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
        }
      : {}),
  }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${info.plural}.${group}`, labels: { 'app.kubernetes.io/part-of': 'strait' } },
    spec: {
      group,
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        ...(info.shortNames.length > 0 ? { shortNames: [...info.shortNames] } : {}),
      },
      scope: info.namespaced ? 'Namespaced' : 'Cluster',
      versions,
    },
  };
}

/** Every CRD strait needs, sorted by name. */
export function buildCrds(schemas: SpecSchemas = SCHEMAS as SpecSchemas): KubeObject[] {
  return (Object.values(Kinds) as KindInfo[])
    .filter((k) => !BUILT_IN.has(groupOf(k.apiVersion)))
    .map((k) => crdFor(k, schemas))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}
