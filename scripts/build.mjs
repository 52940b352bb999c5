#!/usr/bin/env node
// Builds strait: TypeScript (tsc, incremental) into dist/, the resource kinds' validators
// (scripts/build-validators.mjs), the web console's bundle into
// dist/console (scripts/build-console.mjs), then the C addon in native/ against the
// installed Node headers (nodedir from .npmrc), offline.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    console.error(`strait build: '${cmd} ${args.join(' ')}' failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

if (!existsSync(bin('tsc'))) {
  console.error('strait build: node_modules is missing; run `npm ci` first');
  process.exit(1);
}
run(bin('tsc'), ['-p', 'tsconfig.json']);
// the resource kinds' validators as code (ajv standalone), so no process compiles them at start
run(process.execPath, [join(root, 'scripts', 'build-validators.mjs')]);
// the console's bundle, when its sources changed since the last one
const consoleDir = join(root, 'src', 'console', 'web');
if (existsSync(consoleDir)) {
  const bundle = join(root, 'dist', 'console', 'app.js');
  const newestWeb = Math.max(
    ...readdirSync(consoleDir, { recursive: true }).map((f) => statSync(join(consoleDir, String(f))).mtimeMs),
    statSync(join(root, 'package-lock.json')).mtimeMs,
    statSync(join(root, 'scripts', 'build-console.mjs')).mtimeMs,
  );
  if (!existsSync(bundle) || statSync(bundle).mtimeMs < newestWeb || process.argv.includes('--console')) {
    run(process.execPath, [join(root, 'scripts', 'build-console.mjs')]);
  }
}
if (existsSync(join(root, 'native', 'binding.gyp'))) {
  const built = join(root, 'native', 'build', 'Release', 'strait_native.node');
  const srcDir = join(root, 'native', 'src');
  const newest = Math.max(statSync(join(root, 'native', 'binding.gyp')).mtimeMs, ...readdirSync(srcDir).map((f) => statSync(join(srcDir, f)).mtimeMs));
  if (!existsSync(built) || statSync(built).mtimeMs < newest || process.argv.includes('--native')) {
    run(bin('node-gyp'), ['rebuild', '--loglevel=error', '--nodedir=/usr', '--directory', 'native'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
}
