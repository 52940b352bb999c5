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

// One planted import of each wrong kind, and the right ways beside them.
const cases = [
  // areas
  {
    name: 'base importing platform is refused',
    file: 'src/base/x/index.ts',
    code: "import '../../platform/store/index.js';\n",
    bad: /'base' must not import from 'platform'/,
  },
  {
    name: 'platform importing a product is refused',
    file: 'src/platform/x/index.ts',
    code: "import '../../gitops/control/index.js';\n",
    bad: /'platform' must not import from 'gitops\/control'/,
  },
  {
    name: 'a product importing another product is refused',
    file: 'src/mesh/control/x/index.ts',
    code: "import '../../../multicluster/control/clusterset/index.js';\n",
    bad: /product 'mesh' must not import product 'multicluster'/,
  },
  {
    name: 'a product importing the world is refused',
    file: 'src/gitops/control/x.ts',
    code: "import '../../world/supervisor/index.js';\n",
    bad: /must not import from 'world'/,
  },
  {
    name: 'a product importing the strait CLI root is refused',
    file: 'src/githost/cli/x.ts',
    code: "import '../../cli/world-file.js';\n",
    bad: /must not import from 'cli'/,
  },
  {
    name: 'the world importing the CLI root is refused',
    file: 'src/world/x/index.ts',
    code: "import '../../cli/world-file.js';\n",
    bad: /'world' must not import from 'cli'/,
  },
  { name: 'src must not import daemon', file: 'src/cli/x.ts', code: "import '../../daemon/gateway/main.js';\n", bad: /must not import from 'daemon'/ },
  { name: 'src must not import tests', file: 'src/cli/x.ts', code: "import '../../test/helpers/wait.js';\n", bad: /must not import test or bench code/ },
  // layers inside a product
  {
    name: 'wire importing dataplane is refused',
    file: 'src/multicluster/wire/x/index.ts',
    code: "import '../../dataplane/gateway/index.js';\n",
    bad: /layer 'wire' of 'multicluster' must not import from higher layer 'dataplane'/,
  },
  {
    name: 'dataplane importing control is refused',
    file: 'src/mesh/dataplane/x/index.ts',
    code: "import '../../control/ca/index.js';\n",
    bad: /higher layer 'control'/,
  },
  { name: 'control importing cli is refused', file: 'src/gitops/control/x.ts', code: "import '../cli/index.js';\n", bad: /higher layer 'cli'/ },
  { name: 'githost server importing its cli is refused', file: 'src/githost/server/x.ts', code: "import '../cli/index.js';\n", bad: /higher layer 'cli'/ },
  // what each layer may use
  { name: 'wire must not do I/O', file: 'src/multicluster/wire/x/index.ts', code: "import 'node:dgram';\n", bad: /does no I\/O/ },
  { name: 'base must not do I/O', file: 'src/base/x/index.ts', code: "import { readFileSync } from 'node:fs';\nreadFileSync;\n", bad: /does no I\/O/ },
  { name: 'base may name an I/O type', file: 'src/base/x/index.ts', code: "import type { Server } from 'node:http';\nexport type S = Server;\n", bad: null },
  {
    name: 'dataplane must not use npm packages',
    file: 'src/multicluster/dataplane/x/index.ts',
    code: "import 'openpgp';\n",
    bad: /must not use package 'openpgp'/,
  },
  {
    name: 'dataplane must not load the store',
    file: 'src/mesh/dataplane/x/index.ts',
    code: "import '../../../platform/store/index.js';\n",
    bad: /may use only platform\/\{native,netns\}/,
  },
  {
    name: 'dataplane may use the native addon',
    file: 'src/multicluster/dataplane/x/index.ts',
    code: "import '../../../platform/native/index.js';\n",
    bad: null,
  },
  { name: 'wire must not import platform', file: 'src/mesh/wire/x/index.ts', code: "import '../../../platform/native/index.js';\n", bad: /codecs only/ },
  // files and components
  { name: 'a file in no area is refused', file: 'lib/stray.ts', code: 'export const a = 1;\n', bad: /in no strait area/ },
  { name: 'a file loose in a product folder is refused', file: 'src/mesh/stray.ts', code: 'export const a = 1;\n', bad: /in no strait area/ },
  { name: 'a product folder that is no layer is refused', file: 'src/mesh/misc/x.ts', code: 'export const a = 1;\n', bad: /in no strait area/ },
  { name: 'components are entered through index.ts', file: 'src/platform/a/index.ts', code: "import '../store/types.js';\n", bad: /through its index\.ts/ },
  {
    name: 'a product layer is entered through its index.ts',
    file: 'src/gitops/cli/x.ts',
    code: "import '../control/reconcile.js';\n",
    bad: /enter component 'src\/gitops\/control'/,
  },
  // allowed
  {
    name: 'a product control layer importing its dataplane is fine',
    file: 'src/mesh/control/x/index.ts',
    code: "import '../../dataplane/proxy/index.js';\n",
    bad: null,
  },
  {
    name: 'a product importing platform and base is fine',
    file: 'src/gitops/control/x.ts',
    code: "import '../../platform/store/index.js';\nimport '../../base/errors/index.js';\n",
    bad: null,
  },
  {
    name: 'the world importing products is fine',
    file: 'src/world/x/index.ts',
    code: "import '../../multicluster/control/clusterset-dns/index.js';\nimport '../../mesh/dataplane/proxy/index.js';\n",
    bad: null,
  },
  {
    name: 'the CLI root importing products and the world is fine',
    file: 'src/cli/commands/x.ts',
    code: "import '../../gitops/cli/index.js';\nimport '../../world/supervisor/index.js';\n",
    bad: null,
  },
  {
    name: 'a product importing the console is refused',
    file: 'src/gitops/control/x.ts',
    code: "import '../../console/server/index.js';\n",
    bad: /must not import from 'console'/,
  },
  {
    name: 'the browser bundle importing server code is refused',
    file: 'src/console/web/x.tsx',
    code: "import '../../platform/store/index.js';\n",
    bad: /browser bundle \(console\/web\) must not import 'platform'/,
  },
  {
    name: 'the browser bundle importing a Node built-in is refused',
    file: 'src/console/web/x.ts',
    code: "import 'node:fs';\n",
    bad: /must not import 'node:fs'/,
  },
  {
    name: 'the browser bundle using a package outside its list is refused',
    file: 'src/console/web/x.ts',
    code: "import 'yaml';\n",
    bad: /must not use package 'yaml'/,
  },
  {
    name: 'server code importing the browser bundle is refused',
    file: 'src/console/server/index.ts',
    code: "import '../web/main.js';\n",
    bad: /must not import the browser bundle/,
  },
  {
    name: 'the console importing products is fine',
    file: 'src/console/server/index.ts',
    code: "import '../../mesh/control/index.js';\nimport '../../gitops/control/index.js';\n",
    bad: null,
  },
  {
    name: 'the browser bundle importing itself and preact is fine',
    file: 'src/console/web/x.tsx',
    code: "import { h } from 'preact';\nimport './api';\nexport const a = h;\n",
    bad: null,
  },
  {
    name: 'daemon importing the CLI root is refused',
    file: 'daemon/gw/main.ts',
    code: "import '../../src/cli/main.js';\n",
    bad: /'daemon' must not import from 'cli'/,
  },
  {
    name: 'agents importing the CLI root is refused',
    file: 'agents/x/main.ts',
    code: "import '../../src/cli/world-file.js';\n",
    bad: /'agents' must not import from 'cli'/,
  },
  {
    name: 'daemon importing a product and platform is fine',
    file: 'daemon/gw/main.ts',
    code: "import '../../src/multicluster/control/run/index.js';\nimport '../../src/platform/fs/index.js';\n",
    bad: null,
  },
  { name: 'a daemon file over 60 lines is refused', file: 'daemon/gw/main.ts', code: 'export const a = 1;\n'.repeat(61), bad: /has 61 lines, more than 60/ },
  {
    name: 'an agents file over 60 lines is refused',
    file: 'agents/x/main.ts',
    code: '// a line\n'.repeat(70) + 'export const a = 1;\n',
    bad: /has 71 lines, more than 60/,
  },
  { name: 'a daemon file of 60 lines is fine', file: 'daemon/gw/main.ts', code: 'export const a = 1;\n' + '// a line\n'.repeat(59), bad: null },
  { name: 'a long file outside daemon/ and agents/ is fine', file: 'src/world/x/index.ts', code: 'export const a = 1;\n'.repeat(200), bad: null },
  {
    name: 'the control module importing products and the console is fine',
    file: 'src/control-module/run.ts',
    code: "import '../mesh/control/run/index.js';\nimport '../multicluster/control/run/index.js';\nimport '../console/server/index.js';\n",
    bad: null,
  },
  {
    name: 'a product importing the control module is refused',
    file: 'src/mesh/control/x/index.ts',
    code: "import '../../../control-module/index.js';\n",
    bad: /must not import from 'control-module'/,
  },
];

for (const c of cases) {
  test(`layers: ${c.name}`, async () => {
    const msgs = await layerMessages(c.file, c.code);
    if (c.bad)
      assert.ok(
        msgs.some((m) => c.bad.test(m)),
        `expected ${c.bad} in ${JSON.stringify(msgs)}`,
      );
    else assert.deepEqual(msgs, []);
  });
}

test('layers: the tree itself passes the rule', async () => {
  const results = await eslint.lintFiles(['src/**/*.ts', 'src/**/*.tsx', 'daemon/**/*.ts', 'agents/**/*.ts']);
  const msgs = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'strait/layers').map((m) => `${r.filePath}: ${m.message}`));
  assert.deepEqual(msgs, []);
  assert.ok(results.length > 200, `linted ${results.length} files`);
});
