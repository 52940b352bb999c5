// Issue 4 acceptance in the default world: `strait up` deploys the broker and joins both
// clusters; export echo in cluster-b; from cluster-a's client pod, dig answers cluster-b's
// ClusterIP (also by cluster name), the ServiceExport is Valid True, curl through the name
// returns 200 with the client pod's address seen; a join with an overlapping CIDR is refused
// naming both clusters; after unexport the name is NXDOMAIN.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { strait, upWorld, type TestWorld } from '../../helpers/world.js';

let world: TestWorld;
before(() => { world = upWorld(); });
after(() => world?.cleanup());

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);

async function eventually(what: string, fn: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('export echo in cluster-b and reach it from cluster-a by its clusterset.local name', async () => {
  const file = join(world.stateDir, 'broker-info.subm');
  await eventually('broker-info.subm from strait up', () => existsSync(file));
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const rec = world.record();
  const clusterIP = rec.clusters.find((c) => c.name === 'cluster-b')!.services.find((x) => x.name === 'echo')!.clusterIP!;
  const clientIP = rec.clusters.find((c) => c.name === 'cluster-a')!.pods.find((p) => p.name === 'client')!.ip;
  // the clusters joined at start: exporting needs it
  await eventually('cluster-b joined', () => s('show', 'networks', '--cluster', 'cluster-b', '-o', 'json').stdout.includes('100.2.0.0/16'));

  const ex = s('export', 'service', '--namespace', 'default', 'echo', '--cluster', 'cluster-b');
  assert.equal(ex.status, 0, ex.stderr);
  const dig = (name: string) => world.exec('cluster-a/default/client', ['dig', '+short', '+time=1', '+tries=2', name]).stdout.trim();
  await eventually('the clusterset answer', () => dig('echo.default.svc.clusterset.local') === clusterIP);
  assert.equal(dig('cluster-b.echo.default.svc.clusterset.local'), clusterIP);

  const se = JSON.parse(s('get', 'serviceexport', 'echo', '-n', 'default', '--cluster', 'cluster-b', '-o', 'json').stdout) as { status: { conditions: { type: string; status: string; message: string }[] } };
  const valid = se.status.conditions.find((c) => c.type === 'Valid');
  assert.equal(valid?.status, 'True');
  assert.match(valid!.message, /synced to the broker/);

  const curl = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', '-w', '\\n%{http_code}', 'http://echo.default.svc.clusterset.local:8080/']);
  const lines = curl.stdout.trim().split('\n').filter(Boolean);
  const code = lines.pop();
  const body = lines.join('\n');
  assert.equal(code, '200', curl.stderr);
  assert.equal(JSON.parse(body).remoteAddress, clientIP);
  assert.equal(JSON.parse(body).cluster, 'cluster-b');

  const overlap = s('join', join(world.stateDir, 'broker-info.subm'), '--clusterid', 'cluster-c', '--clustercidr', '10.2.128.0/17', '--servicecidr', '100.3.0.0/16');
  assert.equal(overlap.status, 4, overlap.stderr);
  assert.match(overlap.stderr, /"cluster-c".*"cluster-b"/);

  const un = s('unexport', 'service', '--namespace', 'default', 'echo', '--cluster', 'cluster-b');
  assert.equal(un.status, 0, un.stderr);
  await eventually('NXDOMAIN after unexport', () => /status: NXDOMAIN/.test(world.exec('cluster-a/default/client', ['dig', '+time=1', 'echo.default.svc.clusterset.local']).stdout));
});
