#!/usr/bin/env node
// Builds the web console (src/console/web) into dist/console: type-checks it with its own
// tsconfig (DOM, JSX for Preact), bundles it with esbuild (Preact, Cytoscape.js and the
// page's code in one minified file: no CDN at run time, works offline), copies the page
// and its style sheet. Prints the sizes; bench/console.ts holds them to the budget.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'src', 'console', 'web');
const out = join(root, 'dist', 'console');
const bin = (name) => join(root, 'node_modules', '.bin', name);

if (!existsSync(bin('esbuild'))) {
  console.error('strait build: esbuild is missing (a dev dependency): the web console is not built; run `npm ci`');
  process.exit(1);
}
const tsc = spawnSync(bin('tsc'), ['-p', join(web, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
if (tsc.status !== 0) {
  console.error('strait build: the web console does not type-check');
  process.exit(tsc.status ?? 1);
}
const { build } = await import('esbuild');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(web, 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});
copyFileSync(join(web, 'index.html'), join(out, 'index.html'));
copyFileSync(join(web, 'app.css'), join(out, 'app.css'));
if (process.argv.includes('--sizes')) {
  for (const f of ['index.html', 'app.js', 'app.css']) {
    const p = join(out, f);
    console.log(`${f}: ${statSync(p).size} bytes, ${gzipSync(readFileSync(p), { level: 9 }).length} gzipped`);
  }
}
