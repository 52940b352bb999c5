// parseManifests: split multi-document YAML; expand "kind: List"; validate every document
// before returning any, so a failed apply stores nothing. Reading files (bounded) is the
// CLI's job: loadManifests in src/platform/cli-kit.
import type { KubeObject } from './object.js';
import { validateObject, type ManifestOrigin } from './validate.js';
import { yamlDocuments } from './yaml.js';

export interface LoadedManifest extends ManifestOrigin {
  object: KubeObject;
}

/** Parse and validate the documents of one text. Documents are numbered from 1; empty ones are skipped. */
export function parseManifests(text: string, source: string): LoadedManifest[] {
  const out: LoadedManifest[] = [];
  yamlDocuments(text, source).forEach((value, i) => {
    const docIndex = i + 1;
    if (value === null || value === undefined) return;
    const v = value as Record<string, unknown>;
    if (typeof v === 'object' && v['kind'] === 'List' && Array.isArray(v['items'])) {
      for (const item of v['items'] as unknown[]) out.push({ source, docIndex, object: validateObject(item, { source, docIndex }) });
      return;
    }
    out.push({ source, docIndex, object: validateObject(value, { source, docIndex }) });
  });
  return out;
}
