import { Ajv, type ErrorObject, type JSONSchemaType } from 'ajv';
import { E } from '../errors/index.js';

export type ConfigSchema<T> = JSONSchemaType<T>;

export interface ConfigDefinition<T> {
  /** Validate, apply defaults, freeze. `where` names the source in messages (a file path or "--flags"). */
  parse(input: unknown, where?: string): Readonly<T>;
}

const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: true, allowUnionTypes: true });

export function deepFreeze<T>(value: T): Readonly<T> {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

function jsonPath(base: string, instancePath: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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
  const validate = ajv.compile(schema);
  const prefix = opts.prefix ?? '';
  return {
    parse(input: unknown, where?: string): Readonly<T> {
      const copy: unknown = input === undefined ? {} : structuredClone(input);
      if (!validate(copy)) {
        const err = (validate.errors ?? [])[0] as ErrorObject;
        const at = jsonPath(prefix, err.instancePath);
        if (err.keyword === 'additionalProperties') {
          const key = String((err.params as { additionalProperty: string }).additionalProperty);
          const dotted = at ? `${at}.${key}` : key;
          const renamedTo = opts.renamed?.[dotted] ?? opts.renamed?.[key];
          if (renamedTo) throw E.configRenamedKey(where ? `${where}: ${at}` : at, key, renamedTo);
          throw E.configUnknownKey(where ? `${where}: ${at}` : at, key);
        }
        throw E.configInvalid(where ? `${where}: ${at || '(top level)'}` : at || '(top level)', valueAt(copy, err.instancePath), err.message ?? 'is invalid');
      }
      return deepFreeze(copy as T);
    },
  };
}
