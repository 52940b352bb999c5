// loadManifests: read a file, a directory of .yaml/.yml/.json files (sorted, not recursive),
// or standard input ("-"); split multi-document YAML; expand "kind: List"; validate every
// document before returning any, so a failed apply stores nothing.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { E } from '../../base/errors/index.js';
import type { KubeObject } from '../store/index.js';
import { validateObject, type ManifestOrigin } from './validate.js';
import { yamlDocuments } from './yaml.js';

export interface LoadedManifest extends ManifestOrigin {
  object: KubeObject;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

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

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw E.fileUnreadable(path, (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message);
  }
}

/**
 * Load every manifest of `source`: a file, a directory, or "-" for standard input
 * (`stdin` gives the text instead of reading fd 0, for tests and callers that have it).
 */
export function loadManifests(source: string, opts: { stdin?: string } = {}): LoadedManifest[] {
  if (source === '-') return parseManifests(opts.stdin ?? readStdin(), '<stdin>');
  let st;
  try {
    st = statSync(source);
  } catch {
    throw E.fileUnreadable(source, 'no such file or directory');
  }
  if (!st.isDirectory()) return parseManifests(readText(source), source);
  const files = readdirSync(source).filter((f) => MANIFEST_FILE.test(f)).sort();
  return files.flatMap((f) => {
    const p = join(source, f);
    return statSync(p).isFile() ? parseManifests(readText(p), p) : [];
  });
}

function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch (err) {
    throw E.fileUnreadable('<stdin>', (err as Error).message);
  }
}
