// A configuration file's text, YAML or JSON (JSON is YAML). A JSON object (what the local world
// and `strait` write) is read by JSON.parse: yaml (72 modules, and its parser) is loaded only for
// YAML. JSON with a key twice in one object goes to yaml too, which refuses it ("Map keys must
// be unique"): the two readers accept exactly the same files.
import { loadYaml } from './lazy.js';

/**
 * Whether `text`, valid JSON, has an object with the same key twice (JSON.parse keeps the last,
 * yaml refuses). A scan of its tokens: strings (escapes skipped), and for each open object
 * the keys seen so far; a string followed by ':' is a key.
 */
export function jsonHasDuplicateKey(text: string): boolean {
  const objects: (Set<string> | undefined)[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const raw = text.slice(i, j + 1);
      let k = j + 1;
      while (k < text.length && /\s/.test(text[k] as string)) k++;
      const keys = objects[objects.length - 1];
      if (text[k] === ':' && keys) {
        const key = JSON.parse(raw) as string; // "\u0061" and "a" are the same key
        if (keys.has(key)) return true;
        keys.add(key);
      }
      i = j + 1;
      continue;
    }
    if (c === '{') objects.push(new Set());
    else if (c === '[') objects.push(undefined);
    else if (c === '}' || c === ']') objects.pop();
    i++;
  }
  return false;
}

/** A configuration file's text: JSON by JSON.parse, anything else (and JSON with a key twice) by yaml. */
export function parseConfigText(text: string): unknown {
  if (text.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined; // not JSON: yaml reads it (a flow mapping) or says what is wrong
    }
    if (value !== undefined && !jsonHasDuplicateKey(text)) return value;
  }
  return loadYaml().parse(text) as unknown;
}
