// tools/lint/cycles.mjs (run by `npm run lint`): planted cycles are found, runtime and type-only,
// the one allowed cycle stays allowed only while it is type-only, and this repository has none.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..', '..', '..');

interface Cycle {
  files: string[];
  loop: string[];
  typeOnly: boolean;
  allowed: boolean;
}
type FindCycles = (root: string, dirs?: string[]) => Cycle[];
const load = async (): Promise<FindCycles> =>
  ((await import(pathToFileURL(join(root, 'tools', 'lint', 'cycles.mjs')).href)) as { findCycles: FindCycles }).findCycles;

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'strait-cycles-'));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  return dir;
}

test('import cycles: a runtime cycle through a folder index is found, with a loop that closes', async () => {
  const findCycles = await load();
  const dir = tree({
    'src/a/index.ts': "export { b } from './b.js';\nexport const a = 1;\n",
    'src/a/b.ts': "import { a } from './index.js';\nexport const b = a + 1;\n",
    'src/c/index.ts': "import { a } from '../a/index.js';\nexport const c = a;\n",
  });
  try {
    const found = findCycles(dir);
    assert.equal(found.length, 1);
    assert.deepEqual(found[0]?.files, ['src/a/b.ts', 'src/a/index.ts']);
    assert.deepEqual(found[0]?.loop, ['src/a/b.ts', 'src/a/index.ts', 'src/a/b.ts']);
    assert.equal(found[0]?.typeOnly, false);
    assert.equal(found[0]?.allowed, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('import cycles: type-only imports count; under src/base/errors a types-only cycle is allowed, a runtime one is not', async () => {
  const findCycles = await load();
  const dir = tree({
    'src/x/one.ts': "import type { Two } from './two.js';\nexport interface One { t?: Two }\n",
    'src/x/two.ts': "import { type One } from './one.js';\nexport interface Two { o?: One }\n",
    'src/base/errors/codes.ts': "import type { E } from './define.js';\nexport type Code = E;\n",
    'src/base/errors/define.ts': "import type { Code } from './codes.js';\nexport type E = 'a';\nexport type C2 = Code;\n",
    'src/base/other/p.ts': "import './q.js';\nexport const p = 1;\n",
    'src/base/other/q.ts': "import './p.js';\nexport const q = 1;\n",
  });
  try {
    const found = findCycles(dir);
    const of = (f: string): Cycle | undefined => found.find((c) => c.files.includes(f));
    assert.equal(found.length, 3);
    assert.deepEqual([of('src/x/one.ts')?.typeOnly, of('src/x/one.ts')?.allowed], [true, false]);
    assert.deepEqual([of('src/base/errors/codes.ts')?.typeOnly, of('src/base/errors/codes.ts')?.allowed], [true, true]);
    assert.deepEqual([of('src/base/other/p.ts')?.typeOnly, of('src/base/other/p.ts')?.allowed], [false, false]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // the same errors cycle run at run time (every edge a value import) is refused
  const dir2 = tree({
    'src/base/errors/codes.ts': "import { e } from './define.js';\nexport const c = e;\n",
    'src/base/errors/define.ts': "import { c } from './codes.js';\nexport const e = 1;\nexport const f = (): number => c;\n",
  });
  try {
    assert.deepEqual(
      findCycles(dir2).map((c) => [c.typeOnly, c.allowed]),
      [[false, false]],
    );
  } finally {
    rmSync(dir2, { recursive: true, force: true });
  }
});

test('import cycles: this repository has none but the allowed one', async () => {
  const findCycles = await load();
  const found = findCycles(root);
  assert.deepEqual(
    found.filter((c) => !c.allowed).map((c) => c.loop.join(' -> ')),
    [],
  );
  assert.ok(found.every((c) => c.files.every((f) => f.startsWith('src/base/errors/'))));
});
