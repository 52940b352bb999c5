#!/usr/bin/env node
// npm run check: what a reviewer runs, one command, in order, stopping at the first step
// that fails and naming it. The unit tests only (test/unit): the integration, mesh,
// security and real-peer suites stay with `npm test`, which runs every test file.
//   build       tsc into dist/ (fails on any type error: the type check), the console, the C addon
//   eslint      ESLint with the layer rule (tools/lint/layers.mjs)
//   cycles      no import cycles between files (tools/lint/cycles.mjs)
//   biome       Biome's layout of the TypeScript and JavaScript (biome ci)
//   clang-format  the C addon's layout (tools/lint/clang-format.mjs)
//   console-types the web console's own type check (src/console/web/tsconfig.json: DOM, JSX)
//   chart       charts/strait generated from deploy/ (scripts/gen-chart.mjs --check)
//   crds        deploy/crds.yaml is what `strait crds` prints
//   unit tests  node scripts/run-tests.mjs test/unit
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const node = process.execPath;

/** Each step: its name and the command; `check` (instead) when it is not a plain exit status. */
const steps = [
  { name: 'build', cmd: [node, 'scripts/build.mjs'] },
  { name: 'eslint', cmd: [bin('eslint'), '--max-warnings', '0', '.'] },
  { name: 'cycles', cmd: [node, 'tools/lint/cycles.mjs'] },
  { name: 'biome', cmd: [bin('biome'), 'ci', '.'] },
  { name: 'clang-format', cmd: [node, 'tools/lint/clang-format.mjs'] },
  { name: 'console-types', cmd: [bin('tsc'), '-p', 'src/console/web/tsconfig.json'] },
  { name: 'chart', cmd: [node, 'scripts/gen-chart.mjs', '--check'] },
  {
    name: 'crds',
    check: () => {
      const r = spawnSync(node, ['bin/strait.js', 'crds'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      if (r.status !== 0) return `\`strait crds\` failed (exit ${r.status}): ${r.stderr.trim()}`;
      if (r.stdout !== readFileSync(join(root, 'deploy', 'crds.yaml'), 'utf8'))
        return 'deploy/crds.yaml is not what `strait crds` prints: regenerate it with node bin/strait.js crds > deploy/crds.yaml';
      return undefined;
    },
  },
  { name: 'unit tests', cmd: [node, 'scripts/run-tests.mjs', 'test/unit'] },
];

const t0 = Date.now();
for (const step of steps) {
  const start = Date.now();
  console.error(`strait check: ${step.name} …`);
  let failure;
  if (step.check) failure = step.check();
  else {
    const [cmd, ...args] = step.cmd;
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) failure = `'${step.cmd.map((a) => a.replace(`${root}/`, '')).join(' ')}' exited ${r.status ?? r.signal}`;
  }
  if (failure) {
    console.error(`strait check: ${step.name} FAILED: ${failure}`);
    process.exit(1);
  }
  console.error(`strait check: ${step.name} ok (${((Date.now() - start) / 1000).toFixed(1)} s)`);
}
console.error(`strait check: all ${steps.length} steps passed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
