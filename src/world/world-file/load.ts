// Reading a world file (YAML or JSON) or the built-in default.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { describeYamlError } from '../../platform/resources/index.js';
import { E } from '../../base/errors/index.js';
import { DEFAULT_WORLD, parseWorld, type WorldFile } from './config.js';

export function loadWorld(path?: string): Readonly<WorldFile> {
  if (!path) return parseWorld(DEFAULT_WORLD);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw E.fileUnreadable(path, (err as Error).message);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  const bad = doc.errors[0];
  if (bad) throw E.worldParse(path, describeYamlError(bad, text));
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  return parseWorld(data, path);
}
