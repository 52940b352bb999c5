// Read a daemon configuration file (YAML or JSON; JSON is YAML: base/config's parseConfigText).
import { readFileSync } from 'node:fs';
import { parseConfigText } from '../src/base/config/index.js';
import { E } from '../src/base/errors/index.js';

export function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw E.fileUnreadable(path, err instanceof Error ? err.message : String(err));
  }
  try {
    return parseConfigText(text);
  } catch (err) {
    throw E.configInvalid(path, text.slice(0, 80), `is not valid YAML/JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** `--config FILE` from argv. */
export function configPathFromArgv(argv: string[], daemon: string): string {
  const i = argv.indexOf('--config');
  const p = i >= 0 ? argv[i + 1] : undefined;
  if (!p) throw E.usage(`usage: ${daemon} --config FILE (YAML or JSON)`);
  return p;
}
