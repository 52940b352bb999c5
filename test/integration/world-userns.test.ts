// The local world works without root where unprivileged user namespaces are enabled (docs/world.md).
// Runs the world as the unprivileged user nobody (65534); skipped where the test itself
// cannot switch users or the kernel refuses user namespaces.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_WORLD } from '../../src/world/world-file/index.js';
import { BIN, hostNetworkState, isWorldLinkName } from '../helpers/world.js';

const asNobody = (args: string[]) =>
  spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'env', 'HOME=/tmp', process.execPath, BIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'unshare', '--user', '--map-root-user', '--net', 'true']);
const skip =
  process.getuid?.() !== 0 ? 'needs root to switch to an unprivileged user' : probe.status !== 0 ? 'unprivileged user namespaces are disabled here' : false;

test('an unprivileged user runs the world in a user namespace', { skip }, () => {
  mkdirSync('/run/netns', { recursive: true });
  mkdirSync('/etc/netns', { recursive: true });
  const before = hostNetworkState();
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-userns-'));
  chownSync(stateDir, 65534, 65534);
  try {
    const up = asNobody(['up', '--detach', '--state-dir', stateDir]);
    assert.equal(up.status, 0, up.stderr + up.stdout);
    const r = asNobody([
      'exec',
      '--state-dir',
      stateDir,
      'cluster-a/default/client',
      '--',
      'curl',
      '-s',
      '-m',
      '5',
      'http://echo.default.svc.cluster.local:8080/',
    ]);
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

// A sidecar drops to uid 1337, which a user namespace does not map: such a world runs its
// injected pods without sidecars. The node-level proxy needs no other uid (its sockets are
// spared from the redirect by their mark), so there the mesh works: the STRICT row of the
// traffic table with the real curl.
test("an unprivileged user's world meshes its injected pods with the node dataplane (STRICT: in-mesh 200, outsider 56)", { skip }, () => {
  mkdirSync('/run/netns', { recursive: true });
  mkdirSync('/etc/netns', { recursive: true });
  const stateDir = mkdtempSync(join(tmpdir(), 'strait-userns-'));
  chownSync(stateDir, 65534, 65534);
  const fileDir = mkdtempSync(join(tmpdir(), 'strait-userns-world-'));
  chmodSync(fileDir, 0o755);
  const file = join(fileDir, 'world.json');
  writeFileSync(file, JSON.stringify({ ...DEFAULT_WORLD, meshDataplane: 'node' }), { mode: 0o644 });
  try {
    const up = asNobody(['up', '--detach', '--state-dir', stateDir, '--world', file]);
    assert.equal(up.status, 0, up.stderr + up.stdout);
    const strict =
      'apiVersion: security.istio.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh}\nspec: {mtls: {mode: STRICT}}\n---\n' +
      'apiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: default, namespace: mesh}\nspec: {host: "*.mesh.svc.cluster.local", trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}}\n';
    const a = spawnSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', 'env', 'HOME=/tmp', process.execPath, BIN, 'apply', '-f', '-', '--state-dir', stateDir],
      { encoding: 'utf8', input: strict, timeout: 60_000 },
    );
    assert.equal(a.status, 0, a.stderr);
    const curlFrom = (pod: string): string => {
      const r = asNobody([
        'exec',
        '--state-dir',
        stateDir,
        `cluster-a/mesh/${pod}`,
        '--',
        'curl',
        '-sS',
        '-m',
        '5',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        'http://echo.mesh.svc.cluster.local:8080/',
      ]);
      return r.status === 0 ? `HTTP ${r.stdout.trim()}` : `exit ${r.status}`;
    };
    let got: string[] = [];
    for (let i = 0; i < 100; i++) {
      got = [curlFrom('client'), curlFrom('outsider')];
      if (got[0] === 'HTTP 200' && got[1] === 'exit 56') break;
      spawnSync('sleep', ['0.2']);
    }
    assert.deepEqual(got, ['HTTP 200', 'exit 56']);
  } finally {
    asNobody(['down', '--state-dir', stateDir]);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(fileDir, { recursive: true, force: true });
  }
});
