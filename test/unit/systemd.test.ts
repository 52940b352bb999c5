import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const dir = join(root, 'systemd');
const units = readdirSync(dir).filter((f) => f.endsWith('.service'));

test('there is a unit for every bare-host daemon', () => {
  assert.deepEqual(units.sort(), ['strait-control.service', 'strait-gateway.service', 'strait-githost.service', 'strait-node-agent.service']);
});

for (const unit of units) {
  test(`systemd-analyze verify accepts ${unit}`, () => {
    const r = spawnSync('systemd-analyze', ['verify', join(dir, unit)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), '', r.stderr);
  });
  test(`${unit} is hardened`, () => {
    const text = readFileSync(join(dir, unit), 'utf8');
    for (const key of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'CapabilityBoundingSet=', 'RestrictNamespaces=yes', 'User=strait']) {
      assert.ok(text.includes(key), `${unit} lacks ${key}`);
    }
  });
}
