import { Ajv, type ErrorObject, type JSONSchemaType } from 'ajv';
import { E } from '../errors/index.js';

export type ConfigSchema<T> = JSONSchemaType<T>;

export interface ConfigDefinition<T> {
  /** Validate, apply defaults, freeze. `where` names the source in messages (a file path or "--flags"). */
  parse(input: unknown, where?: string): Readonly<T>;
}

const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: true, allowUnionTypes: true });
// on the failure path only: every error, with the schema that raised it, to report the most useful one
const explain = new Ajv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });

/** Levenshtein distance, for "did you mean" (short keys only: both under 64 characters). */
export function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.max(a.length, b.length);
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

/** The known key closest to `key` (case-insensitive edit distance at most a third of its length, at least 2), if any. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const k of known) {
    const d = editDistance(key, k);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

/** The error to report: an unknown key first (a typo also makes a required key "missing"), else the first. */
function pickError(schema: object, input: unknown, first: ErrorObject): ErrorObject {
  const all = explain.compile(schema);
  all(structuredClone(input));
  return (all.errors ?? []).find((e) => e.keyword === 'additionalProperties') ?? first;
}

export function deepFreeze<T>(value: T): Readonly<T> {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

function jsonPath(base: string, instancePath: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = base;
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

function valueAt(root: unknown, instancePath: string): unknown {
  let cur: unknown = root;
  for (const p of instancePath.split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return cur;
}

/**
 * Define a configuration shape. Objects in `schema` should set
 * `additionalProperties: false` so unknown keys are refused. `renamed` maps an
 * old key path (dotted) to its new name, for a pointed message.
 */
export function defineConfig<T>(schema: ConfigSchema<T>, opts: { prefix?: string; renamed?: Record<string, string> } = {}): ConfigDefinition<T> {
  // compiled at the first parse, not at definition: a process defines (imports) many shapes
  // and parses few, and ajv's compile is the costly part of a daemon's start
  let compiled: ReturnType<typeof ajv.compile<T>> | undefined;
  const prefix = opts.prefix ?? '';
  return {
    parse(input: unknown, where?: string): Readonly<T> {
      const validate = (compiled ??= ajv.compile(schema));
      const copy: unknown = input === undefined ? {} : structuredClone(input);
      if (!validate(copy)) {
        const err = pickError(schema, input === undefined ? {} : input, (validate.errors ?? [])[0] as ErrorObject);
        const at = jsonPath(prefix, err.instancePath);
        if (err.keyword === 'additionalProperties') {
          const key = String((err.params as { additionalProperty: string }).additionalProperty);
          const dotted = at ? `${at}.${key}` : key;
          const renamedTo = opts.renamed?.[dotted] ?? opts.renamed?.[key];
          if (renamedTo) throw E.configRenamedKey(where ? `${where}: ${at}` : at, key, renamedTo);
          const known = Object.keys((err.parentSchema as { properties?: object } | undefined)?.properties ?? {});
          const here = valueAt(copy, err.instancePath);
          const free = known.filter((k) => !(here && typeof here === 'object' && k in here));
          throw E.configUnknownKey(where ? `${where}: ${at}` : at, key, closestKey(key, free) ?? closestKey(key, known));
        }
        if (err.keyword === 'required') {
          const missing = String((err.params as { missingProperty: string }).missingProperty);
          throw E.configInvalid(where ? `${where}: ${at || '(top level)'}` : at || '(top level)', missing, 'is required and missing');
        }
        // an enum names what it allows ("must be one of: gateway, worker"), not only that there is a list
        const allowed = err.keyword === 'enum' ? (err.params as { allowedValues?: unknown[] }).allowedValues : undefined;
        const rule = allowed
          ? `must be one of: ${allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`
          : (err.message ?? 'is invalid');
        throw E.configInvalid(where ? `${where}: ${at || '(top level)'}` : at || '(top level)', valueAt(copy, err.instancePath), rule);
      }
      return deepFreeze(copy as T);
    },
  };
}
