// The daemons refuse bad configuration files with a coded error and exit status 2,
// before touching any network device.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'strait-daemon-config-'));

function run(entry: string, args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [join(root, 'dist', entry), ...args], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stderr: r.stderr };
}

const cases: { name: string; entry: string; file?: string; content?: string; code: string; status: number }[] = [
  { name: 'gateway without --config', entry: 'daemon/gateway/main.js', code: 'STRAIT_ERR_USAGE', status: 2 },
  { name: 'gateway with a missing file', entry: 'daemon/gateway/main.js', file: 'missing.yaml', code: 'STRAIT_ERR_FILE_UNREADABLE', status: 2 },
  {
    name: 'gateway with an unknown key',
    entry: 'daemon/gateway/main.js',
    file: 'gw.yaml',
    content: 'clusterId: a\npsk: sixteen-chars-psk!!\nlocalSubnets: [10.1.0.0/16]\npeers: []\ntunel: {}\n',
    code: 'STRAIT_ERR_CONFIG_UNKNOWN_KEY',
    status: 2,
  },
  {
    name: 'gateway with a bad CIDR',
    entry: 'daemon/gateway/main.js',
    file: 'gw2.yaml',
    content: 'clusterId: a\npsk: sixteen-chars-psk!!\nlocalSubnets: [10.1.0.1/16]\npeers: []\n',
    code: 'STRAIT_ERR_CONFIG_INVALID',
    status: 2,
  },
  {
    name: 'agent with a renamed key',
    entry: 'agents/node-agent/main.js',
    file: 'ag.yaml',
    content: '{"remoteCIDRs": [], "remoteSubnets": [], "gateway": {"address": "10.0.0.1"}}',
    code: 'STRAIT_ERR_CONFIG_RENAMED_KEY',
    status: 2,
  },
];

for (const c of cases) {
  test(`daemon config: ${c.name}`, () => {
    const args: string[] = [];
    if (c.file) {
      const p = join(dir, c.file);
      if (c.content !== undefined) writeFileSync(p, c.content);
      args.push('--config', p);
    }
    const r = run(c.entry, args);
    assert.equal(r.status, c.status, r.stderr);
    assert.match(r.stderr, new RegExp(`^error ${c.code}: `), r.stderr);
  });
}

test("daemon config: the control module's poll interval from STRAIT_CONTROL_POLL_INTERVAL is validated like the flag", () => {
  const bad = spawnSync(
    process.execPath,
    [join(root, 'dist', 'daemon/control/main.js'), '--insecure', '--state-dir', join(dir, 'ctl'), '--store-dir', join(dir, 'ctl', 'store')],
    { encoding: 'utf8', timeout: 20_000, env: { ...process.env, STRAIT_CONTROL_POLL_INTERVAL: 'three minutes' } },
  );
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /STRAIT_ERR_CONFIG_INVALID: .*pollIntervalSeconds.*"three minutes"/);
  const zero = spawnSync(
    process.execPath,
    [join(root, 'dist', 'daemon/control/main.js'), '--insecure', '--state-dir', join(dir, 'ctl'), '--store-dir', join(dir, 'ctl', 'store')],
    { encoding: 'utf8', timeout: 20_000, env: { ...process.env, STRAIT_CONTROL_POLL_INTERVAL: '0' } },
  );
  assert.equal(zero.status, 2, zero.stderr);
  assert.match(zero.stderr, /STRAIT_ERR_CONFIG_INVALID: .*pollIntervalSeconds/);
});
