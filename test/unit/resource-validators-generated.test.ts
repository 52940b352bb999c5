// The resource kinds' validators generated at build time (scripts/build-validators.mjs,
// ajv standalone) against the same schemas compiled at run time, the reference: for every
// kind, objects made from its schema and seeded mutations of them (wrong types, missing
// required fields, unknown keys, values out of range) get the same verdict and the same
// errors from both. And validateObject uses a generated validator only for the schema it
// was made from.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import type { ValidateFunction } from 'ajv';
import { generatedValidator, validateObject } from '../../src/platform/resources/index.js';
import { resourceAjv, SCHEMAS, schemaDigest } from '../../src/platform/resources/schemas/index.js';

const requireHere = createRequire(import.meta.url);
const GENERATED = '../../src/platform/resources/schemas/validators';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface S {
  type?: string | string[];
  properties?: Record<string, S>;
  required?: string[];
  items?: S;
  enum?: Json[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  additionalProperties?: boolean | S;
}

/** a small seeded generator (mulberry32) */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** a value shaped by the schema (not always valid: patterns are not followed) */
function make(s: S, r: () => number, depth = 0): Json {
  if (s.enum) return s.enum[Math.floor(r() * s.enum.length)] ?? null;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const o: Record<string, Json> = {};
      for (const [k, sub] of Object.entries(s.properties ?? {})) if ((s.required ?? []).includes(k) || (depth < 4 && r() < 0.5)) o[k] = make(sub, r, depth + 1);
      return o;
    }
    case 'array':
      return depth < 4 && s.items ? Array.from({ length: Math.floor(r() * 3) }, () => make(s.items as S, r, depth + 1)) : [];
    case 'integer':
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 100, Math.floor(r() * 100)));
    case 'number':
      return r() * 100;
    case 'boolean':
      return r() < 0.5;
    case 'string':
      return 'a-b'.slice(0, Math.max(s.minLength ?? 1, Math.min(3, s.maxLength ?? 3)));
    default:
      return 'x';
  }
}

/** one mutation somewhere in the value: a wrong type, a removed key, an unknown key, a number out of range */
function mutate(v: Json, r: () => number): Json {
  if (v === null || typeof v !== 'object') {
    const pick = r();
    return pick < 0.25 ? 'str' : pick < 0.5 ? -5 : pick < 0.75 ? { a: 1 } : 1e12;
  }
  if (Array.isArray(v)) {
    if (v.length === 0 || r() < 0.3) return [...v, 'extra'];
    const i = Math.floor(r() * v.length);
    return v.map((x, j) => (j === i ? mutate(x, r) : x));
  }
  const keys = Object.keys(v);
  const pick = r();
  if (keys.length === 0 || pick < 0.2) return { ...v, unknownField: 1 };
  const k = keys[Math.floor(r() * keys.length)]!;
  if (pick < 0.4) {
    const { [k]: _gone, ...rest } = v;
    return rest;
  }
  return { ...v, [k]: mutate(v[k] as Json, r) };
}

test('every kind has a generated validator, made from the schema it has now', () => {
  for (const kind of Object.keys(SCHEMAS)) {
    const fn = requireHere(`${GENERATED}/${kind}.cjs`) as ValidateFunction & { digest?: string };
    assert.equal(typeof fn, 'function', kind);
    assert.equal(fn.digest, schemaDigest(SCHEMAS[kind as keyof typeof SCHEMAS]), `${kind}: the generated validator is stale`);
  }
});

test('generated and compiled validators agree on 200 objects per kind (seeded mutations of schema-shaped objects)', () => {
  const ajv = resourceAjv();
  let invalid = 0;
  let checked = 0;
  for (const kind of Object.keys(SCHEMAS)) {
    const schema = SCHEMAS[kind as keyof typeof SCHEMAS];
    const generated = requireHere(`${GENERATED}/${kind}.cjs`) as ValidateFunction;
    const compiled = ajv.compile(schema);
    const r = rng(kind.length * 7919 + kind.charCodeAt(0));
    for (let i = 0; i < 200; i++) {
      let obj = make(schema as S, r);
      for (let m = 0; m < i % 4; m++) obj = mutate(obj, r);
      const a = structuredClone(obj);
      const b = structuredClone(obj);
      const okG = generated(a);
      const okC = compiled(b);
      assert.equal(okG, okC, `${kind} #${i}: ${JSON.stringify(obj).slice(0, 300)}`);
      assert.deepEqual(generated.errors ?? null, compiled.errors ?? null, `${kind} #${i}: the errors differ`);
      assert.deepEqual(a, b, `${kind} #${i}: the objects after validation differ`);
      if (!okC) invalid++;
      checked++;
    }
  }
  // both verdicts were exercised
  assert.ok(invalid > checked / 10 && invalid < checked, `${invalid} of ${checked} invalid`);
});

test('validateObject takes a generated validator only for the schema it was made from: a changed schema is compiled instead', () => {
  const schema = SCHEMAS.ServiceExport;
  assert.equal(typeof generatedValidator('ServiceExport'), 'function');
  const changed = structuredClone(schema) as S;
  changed.required = [...(changed.required ?? []), 'spec'];
  assert.equal(generatedValidator('ServiceExport', changed), undefined);
  assert.equal(generatedValidator('../x' as 'ServiceExport'), undefined, 'a kind that is not a file name');
  // and the path in use refuses what the schema refuses, naming the field
  assert.throws(() => validateObject({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 5 } }), /metadata\.name/);
});
