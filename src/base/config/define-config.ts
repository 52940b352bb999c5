import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, JSONSchemaType, Options, ValidateFunction } from 'ajv';
import { E } from '../errors/index.js';
import { AJV_VERSION, newAjv } from './lazy.js';

export type ConfigSchema<T> = JSONSchemaType<T>;

export interface ConfigDefinition<T> {
  /** Validate, apply defaults, freeze. `where` names the source in messages (a file path or "--flags"). */
  parse(input: unknown, where?: string): Readonly<T>;
  /** the JSON schema it validates against (the build generates its validator from it) */
  readonly schema: object;
}

/** the options of the validator that parses (the build's generated validators are made with them) */
export const CONFIG_AJV_OPTIONS: Options = Object.freeze({ allErrors: false, useDefaults: true, strict: true, allowUnionTypes: true });

const requireHere = createRequire(import.meta.url);

/** every shape defined in this process, in definition order (the build generates a validator for each) */
export const DEFINED_CONFIG_SCHEMAS: object[] = [];

/**
 * The name of the validator the build generates for `schema` (scripts/build-validators.mjs):
 * a digest of the schema, the options and ajv's version, so a stale file is never taken.
 */
export function configValidatorName(schema: object): string {
  const digest = createHash('sha256')
    .update(JSON.stringify({ schema, options: CONFIG_AJV_OPTIONS, ajv: AJV_VERSION }))
    .digest('hex')
    .slice(0, 32);
  return `config-${digest}.cjs`;
}

/** the validator generated at build time for this schema, if the build made one (tsc alone does not) */
export function generatedConfigValidator(schema: object): ValidateFunction | undefined {
  let m: unknown;
  try {
    m = requireHere(`./validators/${configValidatorName(schema)}`);
  } catch {
    return undefined;
  }
  return typeof m === 'function' ? (m as ValidateFunction) : undefined;
}

// ajv itself is loaded only where no generated validator serves (tsc-only builds) and on the
// failure path (./lazy.ts)
let ajv: Ajv | undefined;
let explain: Ajv | undefined;

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
  // on the failure path only: every error, with the schema that raised it, to report the most useful one
  explain ??= newAjv({ allErrors: true, verbose: true, strict: true, allowUnionTypes: true });
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
  // the generated validator loaded (or the schema compiled) at the first parse, not at
  // definition: a process defines (imports) many shapes and parses few
  let compiled: ValidateFunction | undefined;
  const prefix = opts.prefix ?? '';
  DEFINED_CONFIG_SCHEMAS.push(schema);
  return {
    schema,
    parse(input: unknown, where?: string): Readonly<T> {
      const validate = (compiled ??= generatedConfigValidator(schema) ?? (ajv ??= newAjv({ ...CONFIG_AJV_OPTIONS })).compile(schema));
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
