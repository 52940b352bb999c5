// World restart (docs/world.md, docs/multicluster.md): a second `strait up` on the same state dir comes back whole. The store
// token is new at every start; the broker connection in every cluster's join, the broker's
// fingerprints, the tunnel PSK and broker-info.subm follow it, so exports sync again and
// `strait verify` passes 12 of 12 after up, export, down, up, export.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { strait, upWorld, type TestWorld } from '../../helpers/world.js';

let world: TestWorld | undefined;
after(() => world?.cleanup());

async function eventually(what: string, fn: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message: string;
}
const validOf = (stateDir: string, cluster: string, name: string): Condition | undefined => {
  const r = strait(['get', 'serviceexport', name, '-n', 'default', '--cluster', cluster, '-o', 'json', '--state-dir', stateDir]);
  if (r.status !== 0) return undefined;
  return (JSON.parse(r.stdout) as { status?: { conditions?: Condition[] } }).status?.conditions?.find((c) => c.type === 'Valid');
};

async function exportAndWait(stateDir: string, cluster: string, name: string): Promise<void> {
  const ex = strait(['export', 'service', '--namespace', 'default', name, '--cluster', cluster, '--state-dir', stateDir]);
  assert.equal(ex.status, 0, ex.stderr);
  let last: Condition | undefined;
  await eventually(`ServiceExport ${cluster}/default/${name} Valid=True`, () => (last = validOf(stateDir, cluster, name))?.status === 'True', 15_000).catch(
    (err: Error) => {
      throw new Error(`${err.message}; last Valid condition: ${JSON.stringify(last)}`);
    },
  );
  assert.match(last!.message, /synced to the broker/);
}

test('up, export, down, up, export: the restarted world syncs exports and verify passes 12/12', async () => {
  world = upWorld();
  const { stateDir } = world;
  const token1 = readFileSync(join(stateDir, 'store.token'), 'utf8');
  const info1 = readFileSync(join(stateDir, 'broker-info.subm'), 'utf8');
  await exportAndWait(stateDir, 'cluster-b', 'echo');
  const down = world.down();
  assert.equal(down.status, 0, down.stderr);

  world = upWorld([], stateDir);
  // every credential the world hands out is new, and they agree with each other
  assert.ok(readFileSync(join(stateDir, 'store.token'), 'utf8') !== token1, 'a new store token');
  assert.ok(readFileSync(join(stateDir, 'broker-info.subm'), 'utf8') !== info1, 'a new broker-info.subm (token and PSK of this run)');
  // the export of the first run is synced by the restarted world, and a new one too
  await exportAndWait(stateDir, 'cluster-b', 'echo');
  await exportAndWait(stateDir, 'cluster-a', 'echo');
  const diag = strait(['diagnose', '--state-dir', stateDir]);
  assert.doesNotMatch(diag.stdout, /not authorized/, diag.stdout);
  const r = strait(['verify', '--cluster', 'cluster-a', '--tocluster', 'cluster-b', '-o', 'json', '--state-dir', stateDir]);
  const out = JSON.parse(r.stdout) as { passed: boolean; checks: { check: string; name: string; result: string; detail: string }[] };
  assert.deepEqual(
    out.checks.filter((c) => c.result !== 'PASS').map((c) => `${c.check} ${c.name}: ${c.detail}`),
    [],
  );
  assert.equal(out.checks.length, 12);
  assert.equal(r.status, 0, r.stderr);
});
