#!/usr/bin/env node
// The C addon's layout check (npm run lint): every native/src/*.c and *.h file as clang-format
// lays it out under native/.clang-format. Names each file that differs and the fix
// (`npm run format`); exit 1 then, or when clang-format is not installed (Debian's
// clang-format, installed by scripts/setup-system.sh).
//   node tools/lint/clang-format.mjs          check
//   node tools/lint/clang-format.mjs --write  format in place (npm run format)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = join(root, 'native', 'src');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.c') || f.endsWith('.h'))
  .sort()
  .map((f) => join(dir, f));
const write = process.argv.includes('--write');

const version = spawnSync('clang-format', ['--version'], { encoding: 'utf8' });
if (version.error || version.status !== 0) {
  console.error('strait lint: clang-format is not installed: run `sudo scripts/setup-system.sh` (Debian package clang-format)');
  process.exit(1);
}

if (write) {
  const r = spawnSync('clang-format', ['-i', ...files], { cwd: root, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const unformatted = [];
for (const f of files) {
  const r = spawnSync('clang-format', ['--dry-run', '--Werror', f], { cwd: root, encoding: 'utf8' });
  // the first difference: "<file>:<line>:<column>: error: code should be clang-formatted"
  if (r.status !== 0) unformatted.push({ file: relative(root, f), line: /:(\d+):\d+: error:/.exec(r.stderr)?.[1] });
}
if (unformatted.length > 0) {
  for (const u of unformatted) console.error(`strait lint: ${u.file}${u.line ? `:${u.line}` : ''} is not laid out as native/.clang-format says`);
  console.error(`strait lint: ${unformatted.length} C file(s) to format: run \`npm run format\` (${version.stdout.trim()})`);
  process.exit(1);
}
