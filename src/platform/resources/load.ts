// parseManifests: split multi-document YAML; expand "kind: List"; validate every document
// before returning any, so a failed apply stores nothing. Reading files (bounded) is the
// CLI's job: loadManifests in src/platform/cli-kit.
import { parseAllDocuments } from 'yaml';
import { E } from '../../base/errors/index.js';
import type { KubeObject } from '../store/index.js';
import { validateObject, type ManifestOrigin } from './validate.js';

export interface LoadedManifest extends ManifestOrigin {
  object: KubeObject;
}

/** Parse and validate the documents of one text. Documents are numbered from 1; empty ones are skipped. */
export function parseManifests(text: string, source: string): LoadedManifest[] {
  const out: LoadedManifest[] = [];
  const docs = parseAllDocuments(text, { prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const docIndex = i + 1;
    if (doc.errors.length > 0) throw E.manifestParse(source, docIndex, doc.errors[0]!.message.split('\n')[0]!);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // an alias without its anchor, too many aliases: the YAML library throws plain errors
      throw E.manifestParse(source, docIndex, (err as Error).message.split('\n')[0] ?? 'invalid');
    }
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
