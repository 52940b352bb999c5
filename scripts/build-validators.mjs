#!/usr/bin/env node
// Generates every resource kind's ajv validator as code, once, at build time (ajv's
// standalone mode): dist/src/platform/resources/schemas/validators/<Kind>.cjs, one
// CommonJS module per kind, required on the kind's first use. A process that validates
// then loads the kinds it meets instead of compiling their schemas (ajv's compile was
// 0.2-1.4 s of a multicluster daemon's start). Each module carries the digest of the schema
// it was made from (with the ajv options and ajv's version); at run time a kind whose schema differs is compiled as before
// (src/platform/resources/validate.ts), so a stale file is never used.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'dist', 'src', 'platform', 'resources', 'schemas');
const { SCHEMAS } = await import(pathToFileURL(join(dir, 'index.js')).href);
const { resourceAjv, schemaDigest } = await import(pathToFileURL(join(dir, 'compile.js')).href);

const out = join(dir, 'validators');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const ajv = resourceAjv({ code: { source: true } });
for (const kind of Object.keys(SCHEMAS).sort()) {
  if (!/^[A-Za-z0-9]+$/.test(kind)) throw new Error(`build-validators: kind ${JSON.stringify(kind)} is not a file name`);
  const code = standaloneCode(ajv, ajv.compile(SCHEMAS[kind]));
  writeFileSync(join(out, `${kind}.cjs`), `${code}\nmodule.exports.digest = ${JSON.stringify(schemaDigest(SCHEMAS[kind]))};\n`);
}
