// validateObject: check one object against its kind's schema (ajv: the validator generated at
// build time, or compiled once per kind)
// and return a normalized copy (apiVersion = the kind's preferred version; Secret
// stringData folded into base64 data). Errors name the source, the document (1-based),
// the field path ("spec.mtls.mode", "spec.ports[0].port") and the rule broken.
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { E, isStraitError } from '../../base/errors/index.js';
import type { KubeObject } from './object.js';
import type { KindInfo, KindName } from './kinds.js';
import { kindOf } from './lookup.js';
import { checkRules, failClosedStandIn } from './rules.js';

export { failClosedStandIn };
import { resourceAjv, SCHEMAS, schemaDigest } from './schemas/index.js';

export interface ManifestOrigin {
  /** file path, "<stdin>" or another name for messages */
  source: string;
  /** 1-based position of the document in its source */
  docIndex: number;
}

/** required synchronously: the validators generated at build time are CommonJS modules, one per kind */
const requireHere = createRequire(import.meta.url);

/** the validator generated at build time (scripts/build-validators.mjs) for this schema of the kind, if the build made one */
export function generatedValidator(kind: KindName, schema: unknown = SCHEMAS[kind]): ValidateFunction | undefined {
  if (!/^[A-Za-z0-9]+$/.test(kind)) return undefined;
  let m: unknown;
  try {
    m = requireHere(`./schemas/validators/${kind}.cjs`);
  } catch {
    return undefined; // not built (tsc alone)
  }
  const fn = m as ValidateFunction & { digest?: unknown };
  return typeof fn === 'function' && fn.digest === schemaDigest(schema) ? fn : undefined;
}

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();
/** a kind's validator: the generated one while its schema is the one it was made from, else compiled here */
function validatorFor(kind: KindName): ValidateFunction {
  let v = compiled.get(kind);
  if (!v) {
    v = generatedValidator(kind) ?? (ajv ??= resourceAjv()).compile(SCHEMAS[kind]);
    compiled.set(kind, v);
  }
  return v;
}

/** "/spec/ports/0/port" -> "spec.ports[0].port" */
function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const p of parts) {
    if (/^\d+$/.test(p)) out += `[${p}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out || '(object)';
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object (a map of fields)',
  array: 'a list',
};

function describe(err: ErrorObject): { path: string; rule: string; value: unknown } {
  const p = err.params as Record<string, unknown>;
  const parent = (err.parentSchema ?? {}) as Record<string, unknown>;
  const desc = typeof parent['description'] === 'string' ? (parent['description'] as string) : undefined;
  switch (err.keyword) {
    case 'required':
      return { path: fieldPath(err.instancePath, String(p['missingProperty'])), rule: 'is required', value: undefined };
    case 'enum':
      return { path: fieldPath(err.instancePath), rule: `must be one of ${(p['allowedValues'] as unknown[]).join(', ')}`, value: err.data };
    case 'type':
      return { path: fieldPath(err.instancePath), rule: `must be ${TYPE_WORDS[String(p['type'])] ?? String(p['type'])}`, value: err.data };
    case 'pattern':
    case 'minLength':
    case 'maxLength':
      return { path: fieldPath(err.instancePath), rule: desc ? `must be ${desc}` : `must match ${String(p['pattern'] ?? err.message)}`, value: err.data };
    case 'minimum':
    case 'maximum':
      return { path: fieldPath(err.instancePath), rule: desc ? `must be ${desc}` : `must be ${p['comparison']} ${p['limit']}`, value: err.data };
    case 'minItems':
      return { path: fieldPath(err.instancePath), rule: `must have at least ${p['limit']} item(s)`, value: undefined };
    case 'anyOf':
      return { path: fieldPath(err.instancePath), rule: 'must be an integer or a string', value: err.data };
    default:
      return { path: fieldPath(err.instancePath), rule: err.message ?? err.keyword, value: err.data };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Violation {
  path: string;
  rule: string;
  value?: unknown;
}

/** The kind of `input` and the first rule it breaks (undefined when valid); throws STRAIT_ERR_KIND_UNKNOWN. */
function check(input: unknown): { info?: KindInfo; broken?: Violation } {
  if (!isObject(input)) return { broken: { path: '(document)', rule: 'must be an object with apiVersion, kind and metadata', value: input } };
  for (const f of ['apiVersion', 'kind'] as const) {
    if (typeof input[f] !== 'string' || input[f] === '') return { broken: { path: f, rule: 'is required and must be a non-empty string', value: input[f] } };
  }
  const info = kindOf(input['apiVersion'] as string, input['kind'] as string);
  if (!info) throw E.kindUnknown(`${input['apiVersion']}/${input['kind']}`);
  const v = validatorFor(info.kind as KindName);
  if (!v(input)) return { info, broken: describe(v.errors![0]!) };
  return { info, broken: checkRules(input as unknown as KubeObject) };
}

/** "namespace/name" (or "name") of something that may be an object, for messages. */
function objectName(input: unknown): string {
  const md = isObject(input) && isObject(input['metadata']) ? input['metadata'] : {};
  const name = typeof md['name'] === 'string' ? md['name'] : '(no name)';
  return typeof md['namespace'] === 'string' && md['namespace'] !== '' ? `${md['namespace']}/${name}` : name;
}

/**
 * Check an object as a store holds it (every write path and every object read from a
 * Kubernetes list/watch): its kind's schema and rules, without normalizing anything.
 * Throws STRAIT_ERR_OBJECT_INVALID naming the kind, namespace/name, field and rule, or
 * STRAIT_ERR_KIND_UNKNOWN.
 */
export function checkStoredObject(input: unknown): void {
  const { broken } = check(input);
  if (!broken) return;
  const kind = isObject(input) && typeof input['kind'] === 'string' ? input['kind'] : 'object';
  throw E.objectInvalid(kind, objectName(input), broken.path, broken.rule, broken.value);
}

/** Validate and normalize one object. Throws STRAIT_ERR_MANIFEST_INVALID or STRAIT_ERR_KIND_UNKNOWN. */
export function validateObject(input: unknown, origin: ManifestOrigin = { source: '<object>', docIndex: 1 }): KubeObject {
  const { source, docIndex } = origin;
  let found;
  try {
    found = check(input);
  } catch (err) {
    if (isStraitError(err, E.kindUnknown.code)) {
      err.detail['source'] = source;
      err.detail['docIndex'] = docIndex;
    }
    throw err;
  }
  const { info, broken } = found;
  if (broken || !info || !isObject(input)) {
    const b = broken ?? { path: '(document)', rule: 'must be an object with apiVersion, kind and metadata', value: input };
    throw E.manifestInvalid(source, docIndex, b.path, b.rule, b.value);
  }
  const out = structuredClone(input) as unknown as KubeObject;
  out.apiVersion = info.apiVersion;
  if (!info.namespaced) delete out.metadata.namespace;
  if (info.kind === 'Secret' && isObject(out['stringData'])) {
    const data: Record<string, string> = isObject(out['data']) ? { ...(out['data'] as Record<string, string>) } : {};
    for (const [k, val] of Object.entries(out['stringData'] as Record<string, string>)) data[k] = Buffer.from(val, 'utf8').toString('base64');
    out['data'] = data;
    delete out['stringData'];
  }
  return out;
}
