// Boot memory (docs/world.md, Boot time and memory): the modules each small process loads at start. Data-plane
// processes (gateway daemon, node agent, mesh sidecar when present) and the pod runtime
// must never load the heavy control-plane parts: openpgp, @kubernetes/client-node, the
// code-hosting server, the store (server and sqlite). Walks the static import graph of
// the compiled entry points (what Node loads before the first line runs; dynamic
// import() is lazy by design and not followed).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const dist = join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'dist');

/** every compiled file and npm package an entry loads statically */
function loads(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm)) {
      const spec = (m[1] ?? m[2]) as string;
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string));
    }
  };
  walk(join(dist, entry));
  return { files: [...files].map((f) => relative(dist, f)).sort(), packages: [...packages].sort() };
}

const NEVER_PACKAGES = ['openpgp', '@kubernetes/client-node', 'better-sqlite3', 'node-forge'];
const NEVER_FILES = [/^src\/githost\//, /^src\/platform\/store\//, /^src\/gitops\//, /^src\/cli\//];

const cases: { name: string; entry: string; allowed: string[] }[] = [
  // (the walker follows static imports only: a package required through createRequire on first
  // use is not seen here; test/unit/daemon-config-file.test.ts runs a daemon's config read and
  // checks yaml is not loaded, test/unit/config-validators-generated.test.ts that every shape has
  // its generated validator)
  // ajv: each configuration's validator is generated at build time (base/config), ajv is required only on a failure;
  // yaml: a JSON configuration file is read by JSON.parse (daemon/config-file.ts), yaml is required for YAML only
  { name: 'gateway daemon', entry: 'daemon/gateway/main.js', allowed: ['prom-client'] },
  { name: 'node agent', entry: 'agents/node-agent/main.js', allowed: ['prom-client'] },
  { name: 'mesh sidecar', entry: 'agents/sidecar/main.js', allowed: ['pino', 'prom-client'] },
  { name: 'node-level mesh proxy', entry: 'agents/mesh-node/main.js', allowed: ['pino', 'prom-client'] },
  { name: 'pod runtime', entry: 'daemon/pod-runtime.js', allowed: ['pino', 'prom-client'] },
];

for (const c of cases) {
  test(`${c.name} loads no heavy control-plane module`, { skip: existsSync(join(dist, c.entry)) ? false : `${c.entry} not built here` }, () => {
    const { files, packages } = loads(c.entry);
    for (const p of NEVER_PACKAGES) assert.ok(!packages.includes(p), `${c.entry} loads ${p}`);
    for (const re of NEVER_FILES)
      assert.deepEqual(
        files.filter((f) => re.test(f)),
        [],
        `${c.entry} loads ${re}`,
      );
    assert.deepEqual(
      packages.filter((p) => !c.allowed.includes(p)),
      [],
      `${c.entry}: npm packages beyond ${c.allowed.join(', ')}`,
    );
  });
}

test('the walker sees a heavy module where there is one (the supervisor loads the store)', () => {
  const { files, packages } = loads('daemon/world.js');
  assert.ok(packages.includes('better-sqlite3'));
  assert.ok(files.some((f) => f.startsWith('src/platform/store/')));
});

test('the code-hosting server loads openpgp only when it first checks a signature', () => {
  const { packages } = loads('daemon/world-githost.js');
  assert.ok(!packages.includes('openpgp'), 'openpgp is imported on first use (src/platform/signatures/openpgp.ts)');
  assert.ok(packages.includes('better-sqlite3'), 'the walker follows the server');
});

test('the mesh agent and the control module load yaml and ajv only when they read a document or a configuration file', () => {
  for (const entry of ['agents/mesh/main.js', 'daemon/control/main.js']) {
    const { packages } = loads(entry);
    for (const p of ['yaml', 'ajv']) assert.ok(!packages.includes(p), `${entry} loads ${p} at start`);
  }
});

test('the multicluster daemon loads node-forge only to make a broker CA, and the DNS library only where it serves DNS', () => {
  const { packages } = loads('daemon/multicluster/main.js');
  assert.ok(!packages.includes('node-forge'), 'node-forge is imported by createBrokerCa (deploy-broker)');
  assert.ok(!packages.includes('dns2'), 'the clusterset DNS server is imported when dns.enabled');
  for (const p of ['openpgp', '@kubernetes/client-node']) assert.ok(!packages.includes(p), `daemon/multicluster/main.js loads ${p}`);
});
