// SO_ORIGINAL_DST through the C addon, with strait's sidecar nftables rules, inside a
// private network namespace (unshare --net): nothing touches the host's namespace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const here = join(process.env['STRAIT_ROOT'] ?? process.cwd(), 'dist', 'test', 'mesh');

test('redirected connection: SO_ORIGINAL_DST gives the address the client dialled; the proxy uid, excluded ports and loopback bypass', () => {
  const r = spawnSync('unshare', ['--net', '--', process.execPath, join(here, 'netns-origdst-child.js')], { encoding: 'utf8', timeout: 25_000 });
  assert.equal(r.status, 0, `${r.stderr}\n${r.stdout}`);
  const out = JSON.parse(r.stdout);
  assert.equal(out.redirected.exit, 0);
  assert.equal(out.redirected.out, '10.99.0.2:8080');
  assert.equal(out.excludedPort.exit, 28, 'excluded port is not redirected (nobody answers on the veth: timeout)');
  assert.equal(out.proxyUid.exit, 28, "the proxy's own uid is not redirected");
  assert.equal(out.direct.exit, 0);
  assert.match(out.direct.out, /^127\.0\.0\.1:\d+$/);
});
