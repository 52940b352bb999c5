// The control module process: configuration is validated once at start (unknown and
// renamed keys refused with a pointed message).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { run } from '../../helpers/run.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const main = join(root, 'dist', 'daemon', 'control', 'main.js');
let dir: string;

before(() => { dir = mkdtempSync(join(tmpdir(), 'strait-control-cfg-')); });
after(() => rmSync(dir, { recursive: true, force: true }));

const cases: { name: string; yaml: string; code: string; message: RegExp }[] = [
  { name: 'unknown key', yaml: 'namespace: argocd\nnamepsace: x\n', code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY', message: /unknown configuration key "namepsace"/ },
  { name: 'renamed key', yaml: 'port: 8080\n', code: 'STRAIT_ERR_CONFIG_RENAMED_KEY', message: /"port" .* was renamed to "listen"/ },
  { name: 'bad listen address', yaml: 'listen: "8080"\n', code: 'STRAIT_ERR_CONFIG_INVALID', message: /listen: "8080"/ },
  { name: 'bad namespace', yaml: 'namespace: Argo_CD\n', code: 'STRAIT_ERR_CONFIG_INVALID', message: /namespace: "Argo_CD"/ },
];

for (const c of cases) {
  test(`config: ${c.name}`, async () => {
    const file = join(dir, `${c.name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(file, c.yaml);
    const r = await run(process.execPath, [main, '--config', file, '--state-dir', dir]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^error ${c.code}: `));
    assert.match(r.stderr, c.message);
  });
}
