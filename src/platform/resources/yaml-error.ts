// Where a YAML (or JSON) text is broken, as an editor shows it: line and column (from 1),
// the reason, and the offending line.
import type { YAMLError } from 'yaml';

export interface YamlErrorPlace {
  line: number;
  column: number;
  reason: string;
  text: string;
}

/** An error of the yaml library (parsed with prettyErrors), placed in `source`. */
export function placeYamlError(err: YAMLError, source: string): YamlErrorPlace {
  const pos = err.linePos?.[0];
  const offset = err.pos?.[0] ?? 0;
  const line = pos?.line ?? source.slice(0, offset).split('\n').length;
  const column = pos?.col ?? offset - source.lastIndexOf('\n', offset - 1);
  // the library appends " at line L, column C:" and a snippet; keep the reason alone
  const reason = (err.message.split('\n')[0] ?? err.message).replace(/ at line \d+, column \d+:?$/, '');
  return { line, column, reason, text: (source.split('\n')[line - 1] ?? '').replace(/\r$/, '') };
}

/** "line 5, column 4: Nested mappings are not allowed ... (line 5: \"   labels: {a: b}\")" */
export function describeYamlError(err: YAMLError, source: string): string {
  const p = placeYamlError(err, source);
  const shown = p.text.length > 120 ? `${p.text.slice(0, 117)}...` : p.text;
  return `line ${p.line}, column ${p.column}: ${p.reason} (line ${p.line}: ${JSON.stringify(shown)})`;
}
