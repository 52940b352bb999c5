// One ajv configuration for the resource schemas, shared by the build (which generates
// every kind's validator once, as code: scripts/build-validators.mjs) and the run time
// (which uses the generated validator of a kind whose schema has not changed since, and
// compiles the schema itself otherwise).
import { createHash } from 'node:crypto';
import type { Ajv, Options } from 'ajv';
import { AJV_VERSION, newAjv } from '../../../base/config/index.js';

export const RESOURCE_AJV_OPTIONS: Options = { allErrors: false, strict: true, verbose: true };

/** an Ajv for the resource schemas (extra options: the build's `code`) */
export function resourceAjv(extra: Options = {}): Ajv {
  // ajv loaded here, not with this module: a process that meets only kinds the build generated never loads it
  const ajv = newAjv({ ...RESOURCE_AJV_OPTIONS, ...extra });
  ajv.addKeyword({ keyword: 'x-kubernetes-preserve-unknown-fields' });
  ajv.addKeyword({ keyword: 'x-kubernetes-int-or-string' });
  return ajv;
}

/** what a generated validator was made from: the schema's JSON, the options and ajv's version, hashed */
export function schemaDigest(schema: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify({ schema, options: RESOURCE_AJV_OPTIONS, ajv: AJV_VERSION }))
    .digest('base64url');
}
