// Manifests of an Application's source.path: every .yaml/.yml/.json file directly in
// the directory (multi-document YAML allowed). When the directory holds a
// kustomization.yaml (or .yml, or Kustomization), its `resources` list is followed
// instead (files and sub-directories, recursively), and its `namespace` and
// `commonLabels` are applied. Other kustomize features are not supported.
import { posix } from 'node:path';
import { E } from '../../base/errors/index.js';
import { yamlDocuments } from '../../platform/resources/index.js';
import type { KubeObject } from '../../platform/store/index.js';
import type { ManifestFile } from './git-cache.js';

const KUSTOMIZATION = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

function parseFile(f: ManifestFile): KubeObject[] {
  const out: KubeObject[] = [];
  yamlDocuments(f.content, f.path).forEach((v, i) => {
    if (v === null) return;
    const items = (v as { kind?: string; items?: unknown[] }).kind?.endsWith('List') && Array.isArray((v as { items?: unknown[] }).items)
      ? (v as { items: unknown[] }).items : [v];
    for (const o of items) {
      if (typeof o !== 'object' || o === null || Array.isArray(o)) throw E.manifestInvalid(f.path, i + 1, '(document)', 'must be an object');
      const obj = o as KubeObject;
      if (typeof obj.apiVersion !== 'string' || !obj.apiVersion) throw E.manifestInvalid(f.path, i + 1, 'apiVersion', 'is required');
      if (typeof obj.kind !== 'string' || !obj.kind) throw E.manifestInvalid(f.path, i + 1, 'kind', 'is required');
      if (typeof obj.metadata?.name !== 'string' || !obj.metadata.name) throw E.manifestInvalid(f.path, i + 1, 'metadata.name', 'is required');
      out.push(obj);
    }
  });
  return out;
}

/** Render the objects of `dir` (repository-relative, '' = root) from all files below it. */
export function renderManifests(files: readonly ManifestFile[], dir: string): KubeObject[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const root = dir.replace(/^\.?\/+/, '').replace(/\/+$/, '').replace(/^\.$/, '');
  return renderDir(byPath, root, 0);
}

function renderDir(byPath: Map<string, ManifestFile>, dir: string, depth: number): KubeObject[] {
  if (depth > 8) throw E.manifestInvalid(dir, 0, 'resources', 'kustomization nesting deeper than 8 levels');
  const join = (p: string): string => (dir ? `${dir}/${p}` : p);
  const kust = KUSTOMIZATION.map((k) => byPath.get(join(k))).find((f) => f !== undefined);
  if (!kust) {
    const direct = [...byPath.values()]
      .filter((f) => posix.dirname(f.path) === (dir || '.'))
      .sort((a, b) => a.path.localeCompare(b.path));
    return direct.flatMap(parseFile);
  }
  const k = (parseFile({ path: kust.path, content: kust.content.includes('apiVersion') ? kust.content : `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: kustomization}\n${kust.content}` })[0] ?? {}) as {
    resources?: unknown; namespace?: unknown; commonLabels?: unknown;
  };
  const resources = Array.isArray(k.resources) ? k.resources : [];
  const out: KubeObject[] = [];
  for (const r of resources) {
    if (typeof r !== 'string') throw E.manifestInvalid(kust.path, 0, 'resources', 'entries must be strings', r);
    const target = posix.normalize(join(r)).replace(/\/+$/, '');
    if (target.startsWith('..')) throw E.manifestInvalid(kust.path, 0, 'resources', 'must stay inside the repository', r);
    const file = byPath.get(target);
    if (file) out.push(...parseFile(file));
    else if ([...byPath.keys()].some((p) => p.startsWith(`${target}/`))) out.push(...renderDir(byPath, target, depth + 1));
    else throw E.manifestInvalid(kust.path, 0, 'resources', 'names a file or directory that does not exist', r);
  }
  const ns = typeof k.namespace === 'string' ? k.namespace : undefined;
  const labels = k.commonLabels && typeof k.commonLabels === 'object' ? k.commonLabels as Record<string, string> : undefined;
  for (const o of out) {
    if (ns && o.kind !== 'Namespace') o.metadata.namespace = ns;
    if (labels) o.metadata.labels = { ...(o.metadata.labels ?? {}), ...labels };
  }
  return out;
}
