// The local world works without root where unprivileged user namespaces are enabled (docs/world.md).
// Runs the world as the unprivileged user nobody (65534); skipped where the test itself
// cannot switch users or the kernel refuses user namespaces.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, hostNetworkState, isWorldLinkName } from '../helpers/world.js';

const asNobody = (args: string[]) => spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'env', 'HOME=/tmp', process.execPath, BIN, ...args],
  { encoding: 'utf8', timeout: 60_000 });
const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'unshare', '--user', '--map-root-user', '--net', 'true']);
const skip = process.getuid?.() !== 0 ? 'needs root to switch to an unprivileged user' : probe.status !== 0 ? 'unprivileged user namespaces are disabled here' : false;

test('an unprivileged user runs the world in a user namespace', { skip }, () => {
  mkdirSync('/run/netns', { recursive: true });
  mkdirSync('/etc/netns', { recursive: true });
  const before = hostNetworkState();
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-userns-'));
  chownSync(stateDir, 65534, 65534);
  try {
    const up = asNobody(['up', '--detach', '--state-dir', stateDir]);
    assert.equal(up.status, 0, up.stderr + up.stdout);
    const r = asNobody(['exec', '--state-dir', stateDir, 'cluster-a/default/client', '--', 'curl', '-s', '-m', '5', 'http://echo.default.svc.cluster.local:8080/']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).remoteAddress, '10.1.1.2');
    const status = JSON.parse(asNobody(['status', '-o', 'json', '--state-dir', stateDir]).stdout);
    assert.equal(status.userNamespace, true);
    assert.equal(asNobody(['exec', '--state-dir', stateDir, 'cluster-a/default/client', '--', 'false']).status, 1);
    const down = asNobody(['down', '--state-dir', stateDir]);
    assert.equal(down.status, 0, down.stderr);
    const after = hostNetworkState();
    assert.deepEqual(after.links.filter((l) => !before.links.includes(l)).filter(isWorldLinkName), []);
  } finally {
    asNobody(['down', '--state-dir', stateDir]);
    rmSync(stateDir, { recursive: true, force: true });
  }
});
