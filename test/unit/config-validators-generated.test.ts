// The configuration shapes' validators generated at build time (scripts/build-validators.mjs)
// against the same schemas compiled at run time, the reference: every shape a module of
// src/ defines has one, and both give the same verdict, the same defaults and the same first
// error for inputs made from the schema and mutations of them. A changed schema is never
// served by an old file (its name is the schema's digest).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { CONFIG_AJV_OPTIONS, configValidatorName, DEFINED_CONFIG_SCHEMAS, generatedConfigValidator } from '../../src/base/config/index.js';

const srcDir = fileURLToPath(new URL('../../src/', import.meta.url));

interface S {
  type?: string | string[];
  properties?: Record<string, S>;
  required?: string[];
  items?: S;
  enum?: unknown[];
  default?: unknown;
}

/** a value shaped by the schema: required keys and every second optional one */
function make(s: S, depth = 0): unknown {
  if (s.enum) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const o: Record<string, unknown> = {};
      Object.entries(s.properties ?? {}).forEach(([k, sub], i) => {
        if ((s.required ?? []).includes(k) || (depth < 3 && i % 2 === 0)) o[k] = make(sub, depth + 1);
      });
      return o;
    }
    case 'array':
      return depth < 3 && s.items ? [make(s.items, depth + 1)] : [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      return 'x';
    default:
      return null;
  }
}

test('every configuration shape defined under src/ has a generated validator that agrees with the compiled schema', async () => {
  const definers = readdirSync(srcDir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.js') && !f.startsWith(join('base', 'config')))
    .filter((f) => /\bdefineConfig\(/.test(readFileSync(join(srcDir, f), 'utf8')));
  assert.ok(definers.length >= 6, `modules that define a configuration: ${definers.join(', ')}`);
  for (const f of definers) await import(pathToFileURL(join(srcDir, f)).href);
  assert.ok(DEFINED_CONFIG_SCHEMAS.length >= definers.length);
  const ajv = new Ajv({ ...CONFIG_AJV_OPTIONS });
  for (const schema of DEFINED_CONFIG_SCHEMAS) {
    const name = configValidatorName(schema);
    const generated = generatedConfigValidator(schema);
    assert.ok(generated, `no generated validator ${name}`);
    const compiled = ajv.compile(schema);
    const base = make(schema as S) as Record<string, unknown>;
    const inputs: unknown[] = [{}, base, { ...base, notAKey: 1 }, [], 'x'];
    for (const k of Object.keys(base))
      inputs.push({ ...base, [k]: { nested: [] } }, { ...base, [k]: 'x' }, Object.fromEntries(Object.entries(base).filter(([j]) => j !== k)));
    for (const input of inputs) {
      const a = structuredClone(input);
      const b = structuredClone(input);
      const va = generated(a) as boolean;
      const vb = compiled(b) as boolean;
      assert.equal(va, vb, `${name}: verdict for ${JSON.stringify(input)}`);
      assert.deepEqual(a, b, `${name}: defaults applied to ${JSON.stringify(input)}`);
      if (!va) assert.deepEqual(generated.errors?.[0], compiled.errors?.[0], `${name}: first error for ${JSON.stringify(input)}`);
    }
  }
});

test('a schema that changed since the build has no generated validator (it is compiled at run time)', () => {
  const schema = DEFINED_CONFIG_SCHEMAS[0] ?? { type: 'object' };
  const changed = { ...schema, description: 'changed after the build' };
  assert.notEqual(configValidatorName(changed), configValidatorName(schema));
  assert.equal(generatedConfigValidator(changed), undefined);
});
