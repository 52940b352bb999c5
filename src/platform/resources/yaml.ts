// Reading YAML (or JSON) documents from text a user or a repository gave us: every way
// it can be bad (syntax, an alias bomb, nesting deeper than anything a manifest needs)
// is STRAIT_ERR_MANIFEST_PARSE naming the source and document, never an internal error.
import { loadYaml } from '../../base/config/index.js';
import { E } from '../../base/errors/index.js';
import { MAX_JSON_DEPTH } from '../http/index.js';
import { describeYamlError } from './yaml-error.js';

/**
 * Alias expansions allowed in one document. Manifests use anchors rarely (a shared label
 * block); a "billion laughs" document needs thousands. yaml's own default is also 100.
 */
export const MAX_YAML_ALIASES = 100;

/** The value of each document of `text` (null for an empty one); errors number documents from 1. */
export function yamlDocuments(text: string, source: string): unknown[] {
  // (yaml is loaded at the first document read, not by every process that imports resources)
  const docs = loadYaml().parseAllDocuments(text, { prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  return list.map((doc, i) => {
    const docIndex = i + 1;
    if (doc.errors.length > 0) throw E.manifestParse(source, docIndex, describeYamlError(doc.errors[0]!, text));
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
    } catch (err) {
      const reason = /alias count/i.test((err as Error).message)
        ? `aliases expand more than ${MAX_YAML_ALIASES} times (an alias bomb?); write the values out instead of repeating anchors`
        : (err as Error).message;
      throw E.manifestParse(source, docIndex, reason);
    }
    if (deeperThan(value, MAX_JSON_DEPTH)) {
      throw E.manifestParse(source, docIndex, `mappings and sequences nest deeper than ${MAX_JSON_DEPTH} levels`);
    }
    return value ?? null;
  });
}

function deeperThan(root: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > max) return true;
    for (const c of Object.values(v as Record<string, unknown>)) stack.push([c, d + 1]);
  }
  return false;
}
