// Manifests of an Application's source.path: every .yaml/.yml/.json file directly in
// the directory (multi-document YAML allowed). When the directory holds a
// kustomization.yaml (or .yml, or Kustomization), its `resources` list is followed
// instead (files and sub-directories, recursively), and its `namespace` and
// `commonLabels` are applied. Other kustomize features are not supported.
// Every object is then validated exactly as `strait apply` validates a file (the kind's
// schema and rules, src/platform/resources): one invalid object refuses the whole
// revision, naming the file, the document, the field and the rule; nothing is applied.
import { posix } from 'node:path';
import { E } from '../../base/errors/index.js';
import { validateObject, yamlDocuments } from '../../platform/resources/index.js';
import type { KubeObject } from '../../platform/store/index.js';
import type { ManifestFile } from './git-cache.js';

const KUSTOMIZATION = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

/** A document of a file, not yet validated, and where it came from. */
interface Rendered {
  source: string;
  docIndex: number;
  value: unknown;
}

/** The non-empty documents of a file (yamlDocuments: syntax, alias bombs and depth are STRAIT_ERR_MANIFEST_PARSE). */
function parseDocs(f: ManifestFile): { docIndex: number; value: unknown }[] {
  return yamlDocuments(f.content, f.path)
    .map((value, i) => ({ docIndex: i + 1, value }))
    .filter((d) => d.value !== null);
}

function parseFile(f: ManifestFile): Rendered[] {
  const out: Rendered[] = [];
  for (const { docIndex, value } of parseDocs(f)) {
    const v = value as { kind?: unknown; items?: unknown };
    const items = typeof v === 'object' && typeof v.kind === 'string' && v.kind.endsWith('List') && Array.isArray(v.items) ? (v.items as unknown[]) : [value];
    for (const o of items) {
      if (typeof o !== 'object' || o === null || Array.isArray(o))
        throw E.manifestInvalid(f.path, docIndex, '(document)', 'must be an object with apiVersion, kind and metadata', o);
      const md = (o as { metadata?: unknown }).metadata;
      if (typeof md !== 'object' || md === null || Array.isArray(md))
        throw E.manifestInvalid(f.path, docIndex, 'metadata', 'is required and must be an object', md);
      out.push({ source: f.path, docIndex, value: o });
    }
  }
  return out;
}

/** Render the objects of `dir` (repository-relative, '' = root) from all files below it, validated. */
export function renderManifests(files: readonly ManifestFile[], dir: string): KubeObject[] {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const root = dir
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '')
    .replace(/^\.$/, '');
  return renderDir(byPath, root, 0).map((r) => validateObject(r.value, { source: r.source, docIndex: r.docIndex }));
}

function renderDir(byPath: Map<string, ManifestFile>, dir: string, depth: number): Rendered[] {
  if (depth > 8) throw E.manifestInvalid(dir, 0, 'resources', 'kustomization nesting deeper than 8 levels');
  const join = (p: string): string => (dir ? `${dir}/${p}` : p);
  const kust = KUSTOMIZATION.map((k) => byPath.get(join(k))).find((f) => f !== undefined);
  if (!kust) {
    const direct = [...byPath.values()].filter((f) => posix.dirname(f.path) === (dir || '.')).sort((a, b) => a.path.localeCompare(b.path));
    return direct.flatMap(parseFile);
  }
  const first = parseDocs(kust)[0]?.value;
  const k = (typeof first === 'object' && first !== null && !Array.isArray(first) ? first : {}) as {
    resources?: unknown;
    namespace?: unknown;
    commonLabels?: unknown;
  };
  const resources = Array.isArray(k.resources) ? k.resources : [];
  const out: Rendered[] = [];
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
  const labels =
    k.commonLabels && typeof k.commonLabels === 'object' && !Array.isArray(k.commonLabels) ? (k.commonLabels as Record<string, unknown>) : undefined;
  for (const r of out) {
    // the result is validated as a whole afterwards: a non-string label fails there
    const o = r.value as { kind?: unknown; metadata: Record<string, unknown> };
    if (ns && o.kind !== 'Namespace') o.metadata['namespace'] = ns;
    if (labels) {
      const have = o.metadata['labels'];
      o.metadata['labels'] = { ...(typeof have === 'object' && have !== null && !Array.isArray(have) ? have : {}), ...labels };
    }
  }
  return out;
}
