// CustomResourceDefinitions for every kind strait declares that a plain cluster lacks
// (Argo CD, Istio, Maistra, MCS, Submariner groups). Generated from kinds.ts so the
// names, plurals, short names and scope always match the store's paths. Versions share
// one structural schema; spec/status keep unknown fields (the ajv schemas in
// src/control/resources/ validate them before they get here), and every CRD has the
// status subresource so that apply never overwrites a controller's status.
import { Kinds, type KindInfo } from '../../resources/index.js';
import type { KubeObject } from '../types.js';

/** Groups that the API server serves itself. */
const BUILT_IN = new Set(['', 'apps', 'discovery.k8s.io', 'coordination.k8s.io']);

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');
const versionOf = (apiVersion: string): string => apiVersion.slice(apiVersion.indexOf('/') + 1);

/** JSON schemas for spec/status by kind, when the resources module provides them. */
export type SpecSchemas = Partial<Record<string, { spec?: object; status?: object }>>;

const open = (description: string): object => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

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

export function crdFor(info: KindInfo, schemas: SpecSchemas = {}): KubeObject {
  const group = groupOf(info.apiVersion);
  const s = schemas[info.kind];
  const versions = [info.apiVersion, ...(info.alsoServed ?? [])].map((av) => ({
    name: versionOf(av),
    served: true,
    storage: av === info.apiVersion,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        description: `${info.kind} (${group}); managed by strait`,
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: s?.spec ?? open(`desired state of the ${info.kind}`),
          status: s?.status ?? open(`observed state of the ${info.kind}, written by strait's controllers`),
        },
        // ConfigMap-like kinds of some upstream groups carry top-level fields besides spec
        'x-kubernetes-preserve-unknown-fields': true,
      },
    },
    subresources: { status: {} },
    ...(COLUMNS[info.kind] ? {
      additionalPrinterColumns: [...(COLUMNS[info.kind] ?? []), { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    } : {}),
  }));
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${info.plural}.${group}`, labels: { 'app.kubernetes.io/part-of': 'strait' } },
    spec: {
      group,
      names: {
        kind: info.kind, listKind: `${info.kind}List`, plural: info.plural, singular: info.singular,
        ...(info.shortNames.length > 0 ? { shortNames: [...info.shortNames] } : {}),
      },
      scope: info.namespaced ? 'Namespaced' : 'Cluster',
      versions,
    },
  };
}

/** Every CRD strait needs, sorted by name. */
export function buildCrds(schemas: SpecSchemas = {}): KubeObject[] {
  return (Object.values(Kinds) as KindInfo[])
    .filter((k) => !BUILT_IN.has(groupOf(k.apiVersion)))
    .map((k) => crdFor(k, schemas))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}
