#!/usr/bin/env node
// Runs every compiled benchmark (dist/bench/*.js) in turn, each with its default bounded
// arguments, and prints its output. `npm run bench` builds first.
//   node scripts/run-bench.mjs [filter...]   only benchmarks whose file name contains a filter
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'dist', 'bench');
if (!existsSync(dir)) {
  console.error('strait bench: dist/bench is missing; run `node scripts/build.mjs` first');
  process.exit(1);
}
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.js') && (filters.length === 0 || filters.some((x) => f.includes(x))))
  .sort();
if (files.length === 0) {
  console.error('strait bench: no benchmark matches');
  process.exit(1);
}
// each benchmark bounds its own runs; this is only a backstop against a hung one
const LIMIT_MS = 15 * 60_000;
let failed = 0;
for (const f of files) {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
  console.log(`\n=== ${f} (load average ${load}) ===`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [join(dir, f)], { cwd: root, stdio: 'inherit', timeout: LIMIT_MS, env: { ...process.env, STRAIT_ROOT: root } });
  const status = r.error ? r.error.message : r.signal ? `signal ${r.signal}` : `exit ${r.status}`;
  console.log(`=== ${f}: ${status}, ${((Date.now() - t0) / 1000).toFixed(1)} s ===`);
  if (r.error || r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
