// Routed health of the clusterset IP, with real traffic in one running local world (the
// default one: echo and a client pod in both clusters): echo exported from both clusters,
// cluster-a's client curls cluster-a's clusterset IP and reaches both clusters' echo; the
// tunnel to cluster-b is cut (nftables drop of the tunnel's UDP 4500 in cluster-a's gateway
// node): once cluster-a's gateway says so, cluster-b's endpoint behind the clusterset IP is not
// ready and every curl is answered by cluster-a's own echo (none is sent into the dead
// tunnel); the rule removed, cluster-b is reached again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { execInPod, findPod, type WorldRecord } from '../../src/cli/world-file.js';
import { strait, upWorld, type TestWorld } from '../helpers/world.js';

let world: TestWorld;
let sup = 0;
before(() => {
  world = upWorld();
  sup = world.record().supervisorPid;
});
after(() => {
  nft('delete table inet strait_fault');
  world?.cleanup();
});

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** nft inside cluster-a's gateway node (the world's network namespace of that node) */
function nft(script: string): { status: number | null; stderr: string } {
  if (!world) return { status: 0, stderr: '' };
  const rec = world.record() as unknown as { clusters: { name: string; nodes: { role: string; netns: string }[] }[] };
  const netns = rec.clusters.find((c) => c.name === 'cluster-a')!.nodes.find((n) => n.role === 'gateway')!.netns;
  return spawnSync('nsenter', ['-t', String(sup), '-m', '-n', 'ip', 'netns', 'exec', netns, 'nft', '-f', '-'], { encoding: 'utf8', input: script });
}

/** one curl from cluster-a's client: the echo's cluster, or '' when it did not answer */
async function curlCluster(url: string): Promise<string> {
  const rec = world.record() as unknown as WorldRecord;
  const client = findPod(rec, 'cluster-a/default/client');
  const r = await execInPod(rec, client.netns, ['curl', '-s', '-m', '2', url], 10_000);
  if (r.code !== 0) return '';
  try {
    return (JSON.parse(r.stdout) as { cluster: string }).cluster;
  } catch {
    return '';
  }
}

async function until(what: string, fn: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** cluster-a's imported slice of cluster-b's export: its endpoint's ready condition */
function bReadyInA(): boolean | undefined {
  const r = s('get', 'endpointslice', 'echo.cluster-b', '-n', 'default', '--cluster', 'cluster-a', '-o', 'json');
  if (r.status !== 0) return undefined;
  const eps = (JSON.parse(r.stdout) as { endpoints?: { conditions?: { ready?: boolean } }[] }).endpoints ?? [];
  return eps.length > 0 ? eps[0]!.conditions?.ready !== false : undefined;
}

test('the clusterset IP sends nothing into a dead tunnel: with the tunnel to cluster-b cut, every connection is answered by cluster-a; cluster-b is reached again after', async () => {
  await until('cluster-b joined', () => s('show', 'networks', '--cluster', 'cluster-b', '-o', 'json').stdout.includes('100.2.0.0/16'), 120_000);
  for (const c of ['cluster-a', 'cluster-b']) {
    const ex = s('export', 'service', '--namespace', 'default', 'echo', '--cluster', c);
    assert.equal(ex.status, 0, ex.stderr);
  }
  let vip = '';
  await until(
    "cluster-a's clusterset IP",
    () => {
      const r = s('get', 'serviceimport', 'echo', '-n', 'default', '--cluster', 'cluster-a', '-o', 'json');
      vip = r.status === 0 ? ((JSON.parse(r.stdout) as { spec: { ips?: string[] } }).spec.ips?.[0] ?? '') : '';
      return vip !== '';
    },
    60_000,
  );
  const url = `http://${vip}:8080/`;
  // both clusters behind it (a connection goes to either at random)
  const seen = new Set<string>();
  await until(
    'curls to the clusterset IP reach both clusters',
    async () => (seen.add(await curlCluster(url)), seen.has('cluster-a') && seen.has('cluster-b')),
    120_000,
  );

  const cut = nft('table inet strait_fault {\n chain out { type filter hook output priority 0; udp dport 4500 drop; }\n}\n');
  assert.equal(cut.status, 0, cut.stderr);
  const t0 = Date.now();
  try {
    // the gateway's own record says the connection is down (docs/faults.md: within 3 s)
    await until(
      "cluster-a's Gateway record: the connection to cluster-b is not connected",
      () => /"status":\s*"(error|connecting)"/.test(s('show', 'connections', '--cluster', 'cluster-a', '-o', 'json').stdout),
      30_000,
    );
    // from then on, connections to the clusterset IP are answered by cluster-a alone: twenty
    // in a row (a connection sent into the cut tunnel fails and starts the count again)
    let inARow = 0;
    const answers: string[] = [];
    await until(
      'twenty connections in a row to the clusterset IP answered by cluster-a',
      async () => {
        const a = await curlCluster(url);
        answers.push(a || 'failed');
        inARow = a === 'cluster-a' ? inARow + 1 : 0;
        return inARow >= 20;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; answers: ${answers.join(' ')}`);
    });
    console.log(`twenty in a row answered by cluster-a after ${answers.length} connections, ${Date.now() - t0} ms after the cut (the poll's own time)`);
    assert.equal(bReadyInA(), false, "cluster-b's endpoint behind cluster-a's clusterset IP is not ready");
  } finally {
    nft('delete table inet strait_fault');
  }
  await until("cluster-b's endpoint ready again in cluster-a", () => bReadyInA() === true, 60_000);
  const again = new Set<string>();
  await until('cluster-b reached again through the clusterset IP', async () => (again.add(await curlCluster(url)), again.has('cluster-b')), 60_000);
});
