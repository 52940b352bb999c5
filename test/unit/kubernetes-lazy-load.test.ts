// @kubernetes/client-node takes a second or more to load: only a Kubernetes store may
// load it, on open (dynamic import), so that the CLI, the local world and every data-plane
// process never pay for it (ARCHITECTURE.md: a data-plane process never loads it).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.js')) out.push(p);
  }
  return out;
}

test('no compiled product module imports @kubernetes/client-node statically', () => {
  const offenders: string[] = [];
  for (const dir of ['src', 'daemon', 'agents']) {
    if (!existsSync(join(root, 'dist', dir))) continue;
    for (const f of walk(join(root, 'dist', dir))) {
      const text = readFileSync(f, 'utf8');
      if (/^\s*import\s[^;]*from\s*['"]@kubernetes\/client-node['"]/m.test(text) || /^\s*import\s*['"]@kubernetes\/client-node['"]/m.test(text)) {
        offenders.push(relative(root, f));
      }
    }
  }
  assert.deepEqual(offenders, []);
  // and the Kubernetes store does load it, dynamically
  const idx = readFileSync(join(root, 'dist', 'src', 'platform', 'store', 'kubernetes', 'index.js'), 'utf8');
  assert.match(idx, /import\(['"]@kubernetes\/client-node['"]\)/);
});
