import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const eslint = new ESLint({ cwd: root });

async function layerMessages(filePath: string, code: string): Promise<string[]> {
  const [res] = await eslint.lintText(code, { filePath: join(root, filePath) });
  return (res?.messages ?? []).filter((m) => m.ruleId === 'strait/layers').map((m) => m.message);
}

const cases = [
  { name: 'base importing control is refused', file: 'src/base/x/index.ts', code: "import '../../control/store/index.js';\n", bad: /must not import from higher layer 'control'/ },
  { name: 'wire importing dataplane is refused', file: 'src/wire/x/index.ts', code: "import '../../dataplane/y/index.js';\n", bad: /higher layer 'dataplane'/ },
  { name: 'wire must not do I/O', file: 'src/wire/x/index.ts', code: "import 'node:dgram';\n", bad: /codecs only/ },
  { name: 'dataplane must not use npm packages', file: 'src/dataplane/x/index.ts', code: "import 'openpgp';\n", bad: /must not use package 'openpgp'/ },
  { name: 'a file in no layer is refused', file: 'lib/stray.ts', code: 'export const a = 1;\n', bad: /in no strait layer/ },
  { name: 'components are entered through index.ts', file: 'src/control/a/index.ts', code: "import '../store/types.js';\n", bad: /through its index\.ts/ },
  { name: 'src must not import daemon', file: 'src/cli/x/index.ts', code: "import '../../../daemon/gateway/main.js';\n", bad: /higher layer 'daemon'/ },
  { name: 'control importing base is fine', file: 'src/control/a/index.ts', code: "import '../../base/errors/index.js';\n", bad: null },
  { name: 'daemon importing cli is fine', file: 'daemon/gw/main.ts', code: "import '../../src/cli/main.js';\n", bad: null },
];

for (const c of cases) {
  test(`layers: ${c.name}`, async () => {
    const msgs = await layerMessages(c.file, c.code);
    if (c.bad) assert.ok(msgs.some((m) => c.bad.test(m)), `expected ${c.bad} in ${JSON.stringify(msgs)}`);
    else assert.deepEqual(msgs, []);
  });
}
