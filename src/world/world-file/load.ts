// Reading a world file (YAML or JSON) or the built-in default.
import { parse } from 'yaml';
import { E } from '../../base/errors/index.js';
import { readInput } from '../../platform/cli-kit/index.js';
import { DEFAULT_WORLD, parseWorld, type WorldFile } from './config.js';

export function loadWorld(path?: string): Readonly<WorldFile> {
  if (!path) return parseWorld(DEFAULT_WORLD);
  const text = readInput(path);
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    throw E.worldInvalid(path, text.slice(0, 40), `is not valid YAML: ${(err as Error).message}`);
  }
  return parseWorld(data, path);
}
