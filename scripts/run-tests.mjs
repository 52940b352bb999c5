#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with node's test runner.
//   node scripts/run-tests.mjs [filter...]   only files whose path contains a filter
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const testRoot = join(root, 'dist', 'test');

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = walk(testRoot, [])
  .filter((f) => filters.length === 0 || filters.some((x) => relative(root, f).includes(x)))
  .sort();
if (files.length === 0) {
  console.error('strait tests: no test files found under dist/test');
  process.exit(1);
}
const args = ['--enable-source-maps', '--test', '--test-reporter=spec', `--test-concurrency=${Math.max(2, availableParallelism())}`, ...files];
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, STRAIT_ROOT: root } });
process.exit(r.status ?? 1);
