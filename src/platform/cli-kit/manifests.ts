// loadManifests: read a file, a directory of .yaml/.yml/.json files (sorted, not recursive),
// or standard input ("-"), each through readInput (bounded); then parse and validate
// every document before returning any (parseManifests), so a failed apply stores nothing.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { E } from '../../base/errors/index.js';
import { parseManifests, type LoadedManifest } from '../resources/index.js';
import { readInput } from './read-input.js';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * Load every manifest of `source`: a file, a directory, or "-" for standard input
 * (`stdin` gives the text instead of reading fd 0, for tests and callers that have it).
 */
export function loadManifests(source: string, opts: { stdin?: string } = {}): LoadedManifest[] {
  if (source === '-') return parseManifests(opts.stdin ?? readInput('-'), '<stdin>');
  let st;
  try {
    st = statSync(source);
  } catch {
    throw E.fileUnreadable(source, 'no such file or directory');
  }
  if (!st.isDirectory()) return parseManifests(readInput(source), source);
  const files = readdirSync(source)
    .filter((f) => MANIFEST_FILE.test(f))
    .sort();
  return files.flatMap((f) => {
    const p = join(source, f);
    return statSync(p).isFile() ? parseManifests(readInput(p), p) : [];
  });
}
