#!/usr/bin/env node
// Generates every resource kind's ajv validator as code, once, at build time (ajv's
// standalone mode): dist/src/platform/resources/schemas/validators/<Kind>.cjs, one
// CommonJS module per kind, required on the kind's first use. A process that validates
// then loads the kinds it meets instead of compiling their schemas (ajv's compile was
// 0.2-1.4 s of a multicluster daemon's start). Each module carries the digest of the schema
// it was made from (with the ajv options and ajv's version); at run time a kind whose schema differs is compiled as before
// (src/platform/resources/validate.ts), so a stale file is never used.
// The same for every configuration shape (defineConfig: the world file, the control module's,
// the multicluster daemon's and the code-hosting server's configuration), into
// dist/src/base/config/validators/config-<digest>.cjs: the modules under dist/src that define
// one are imported here and each defined schema generated; the file's name is the digest of
// the schema, the options and ajv's version (src/base/config/define-config.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
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

// configuration shapes: every module of dist/src that calls defineConfig (found by its text)
const configBase = join(root, 'dist', 'src', 'base', 'config');
const config = await import(pathToFileURL(join(configBase, 'define-config.js')).href);
// (only files whose TypeScript source still exists: tsc leaves the output of a deleted source in dist/)
const definers = readdirSync(join(root, 'dist', 'src'), { recursive: true })
  .filter((f) => f.endsWith('.js') && !f.startsWith(join('base', 'config')))
  .filter((f) => existsSync(join(root, 'src', f.replace(/\.js$/, '.ts'))))
  .filter((f) => /\bdefineConfig\(/.test(readFileSync(join(root, 'dist', 'src', f), 'utf8')))
  .sort();
for (const f of definers) await import(pathToFileURL(join(root, 'dist', 'src', f)).href);
const configOut = join(configBase, 'validators');
rmSync(configOut, { recursive: true, force: true });
mkdirSync(configOut, { recursive: true });
const configAjv = new Ajv({ ...config.CONFIG_AJV_OPTIONS, code: { source: true } });
for (const schema of config.DEFINED_CONFIG_SCHEMAS) {
  writeFileSync(join(configOut, config.configValidatorName(schema)), `${standaloneCode(configAjv, configAjv.compile(schema))}\n`);
}
if (config.DEFINED_CONFIG_SCHEMAS.length < definers.length) {
  throw new Error(`build-validators: ${definers.length} modules call defineConfig but ${config.DEFINED_CONFIG_SCHEMAS.length} shapes were defined`);
}
