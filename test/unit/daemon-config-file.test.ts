// A daemon's configuration file: JSON is read by JSON.parse (yaml is not loaded), YAML by yaml,
// and both accept exactly the same files: a JSON object with a key twice goes to yaml, which
// refuses it as it always did; random JSON documents read the same both ways.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as yamlParse } from 'yaml';
import { jsonHasDuplicateKey } from '../../src/base/config/index.js';
import { isStraitError } from '../../src/base/errors/index.js';
import { readConfigFile } from '../../daemon/config-file.js';

const dir = mkdtempSync(join(tmpdir(), 'strait-config-file-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('a JSON file is read without loading yaml; a YAML file loads it', () => {
  const mod = new URL('../../daemon/config-file.js', import.meta.url).href;
  const read = (p: string): { value: unknown; yaml: boolean } => {
    const code = `import { createRequire } from 'node:module';
import { readConfigFile } from ${JSON.stringify(mod)};
const value = readConfigFile(${JSON.stringify(p)});
const cache = createRequire(import.meta.url).cache;
console.log(JSON.stringify({ value, yaml: Object.keys(cache).some((k) => k.includes('/node_modules/yaml/')) }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { value: unknown; yaml: boolean };
  };
  assert.deepEqual(read(file('a.json', '{"clusterId": "a", "peers": [{"clusterId": "b"}]}\n')), {
    value: { clusterId: 'a', peers: [{ clusterId: 'b' }] },
    yaml: false,
  });
  assert.deepEqual(read(file('a.yaml', 'clusterId: a\npeers:\n  - clusterId: b\n')), { value: { clusterId: 'a', peers: [{ clusterId: 'b' }] }, yaml: true });
});

test('a key twice in one JSON object is refused as yaml refuses it; the same key in two objects is not a duplicate', () => {
  for (const text of ['{"a": 1, "a": 2}', '{"x": {"b": 1, "\\u0062": 2}}', '{"l": [{"k": 1}, {"k": 2, "k": 3}]}']) {
    assert.equal(jsonHasDuplicateKey(text), true, text);
    assert.throws(
      () => readConfigFile(file('dup.json', text)),
      (e) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID') && /unique/i.test((e as Error).message),
      text,
    );
  }
  for (const text of ['{"l": [{"k": 1}, {"k": 2}]}', '{"a": "\\"a\\": 1", "b": ["a", "a"], "c": {"a": {"a": 1}}}', '{"a\\\\": 1, "a": 2}']) {
    assert.equal(jsonHasDuplicateKey(text), false, text);
    assert.deepEqual(readConfigFile(file('ok.json', text)), JSON.parse(text), text);
  }
});

test('text that starts like JSON but is YAML (a flow mapping), or is neither, is read or refused by yaml as before', () => {
  assert.deepEqual(readConfigFile(file('flow.yaml', '{a: 1, b: [x, y]}')), { a: 1, b: ['x', 'y'] });
  assert.throws(
    () => readConfigFile(file('bad.json', '{"a": ')),
    (e) => isStraitError(e, 'STRAIT_ERR_CONFIG_INVALID') && /is not valid YAML\/JSON/.test((e as Error).message),
  );
});

test('random JSON documents read the same as yaml reads them', () => {
  let seed = 7;
  const r = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const keys = ['a', 'b', 'peers', 'x y', 'é', '\\', '"q"', '0'];
  const make = (depth: number): unknown => {
    const t = r();
    if (depth > 3 || t < 0.3) return [null, true, false, 0, -1.5, 1e21, 'text', '', '\n\t', 'ü'][Math.floor(r() * 10)];
    if (t < 0.6) return Array.from({ length: Math.floor(r() * 4) }, () => make(depth + 1));
    const o: Record<string, unknown> = {};
    for (const k of keys) if (r() < 0.4) o[k] = make(depth + 1);
    return o;
  };
  for (let i = 0; i < 300; i++) {
    const doc = { top: make(0), n: i };
    const text = JSON.stringify(doc, null, i % 2 ? 2 : undefined);
    assert.deepEqual(readConfigFile(file('r.json', text)), yamlParse(text), text);
  }
});
