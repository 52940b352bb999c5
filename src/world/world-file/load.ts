// Reading a world file (YAML or JSON) or the built-in default.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
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
  let data: unknown;
  try {
    data = parse(text);
  } catch (err) {
    throw E.worldInvalid(path, text.slice(0, 40), `is not valid YAML: ${(err as Error).message}`);
  }
  return parseWorld(data, path);
}
