// Output for humans and scripts: kubectl/subctl-style tables, JSON, YAML.
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { E } from '../../base/errors/index.js';

export type OutputFormat = 'text' | 'json' | 'yaml' | 'wide';

export function parseOutputFormat(value: string | undefined, allowed: OutputFormat[] = ['text', 'json', 'yaml', 'wide']): OutputFormat {
  const v = (value ?? 'text') as OutputFormat;
  if (!allowed.includes(v)) throw E.usage(`unknown output format "${value}"; use one of: ${allowed.join(', ')}`, { value });
  return v;
}

/** Columns separated by at least three spaces, headers in upper case, as kubectl and subctl print them. */
export function formatTable(headers: string[], rows: (string | number | undefined)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === undefined || c === '' ? '<none>' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return (
    cells
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd((widths[i] ?? 0) + 3)))
          .join('')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

// DEL and the C1 controls: JSON.stringify and yaml leave them raw (C0 they escape); the terminal
// guard (terminal-safe.ts) would make them visible and change the document, so they are written
// as escapes of JSON's and YAML's own syntax: the output stays exact and the terminal safe
const RAW_CONTROLS = /[\u007f-\u009f]/g;

/** JSON, indented; every control character escaped (a raw one can only be inside a string). */
export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(RAW_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';
}

/** One JSON document on one line (a watch's events), escaped as formatJson escapes. */
export function formatJsonLine(value: unknown): string {
  return JSON.stringify(value).replace(RAW_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';
}

/** YAML; a string with DEL or a C1 control is double-quoted, where `\\xHH` escapes it. */
export function formatYaml(value: unknown): string {
  const Y = yamlModule();
  const doc = new Y.Document(value);
  Y.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && /[\u007f-\u009f]/.test(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 }).replace(RAW_CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

let yaml: typeof Yaml | undefined;
/** yaml, loaded on first use: the world's commands (`strait up` stays resident) print none */
function yamlModule(): typeof Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml;
}
