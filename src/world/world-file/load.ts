// Reading a world file (YAML or JSON) or the built-in default.
import { parseDocument } from 'yaml';
import { describeYamlError } from '../../platform/resources/index.js';
import { E } from '../../base/errors/index.js';
import { readInput } from '../../platform/cli-kit/index.js';
import { DEFAULT_WORLD, parseWorld, type WorldFile } from './config.js';

export function loadWorld(path?: string): Readonly<WorldFile> {
  if (!path) return parseWorld(DEFAULT_WORLD);
  const text = readInput(path);
  const doc = parseDocument(text, { prettyErrors: true });
  const bad = doc.errors[0];
  if (bad) throw E.worldParse(path, describeYamlError(bad, text));
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw E.worldParse(path, (err as Error).message.split('\n')[0]!);
  }
  return parseWorld(data, path);
}
