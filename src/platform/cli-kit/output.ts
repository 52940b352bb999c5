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
  return cells
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : (c ?? '').padEnd((widths[i] ?? 0) + 3))).join('').trimEnd())
    .join('\n') + '\n';
}

export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

export function formatYaml(value: unknown): string {
  return yamlModule().stringify(value, { lineWidth: 0 });
}

let yaml: typeof Yaml | undefined;
/** yaml, loaded on first use: the world's commands (`strait up` stays resident) print none */
function yamlModule(): typeof Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml;
}
