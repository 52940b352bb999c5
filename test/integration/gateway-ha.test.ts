// Gateway HA (docs/gateway-and-agent.md): a cluster with two gateway nodes (lease in the cluster's store). Continuous
// HTTP probes from cluster-a's client (worker node: agent -> VXLAN -> active gateway) to
// cluster-b's echo; kill -9 of the active gateway: the passive one takes the lease, the
// agent and the remote gateway follow it, traffic resumes, and the records say so (Gateway
// HA status, `strait show gateways`, the Endpoint on the other cluster). The failover time
// is measured in bench/gateway-failover.ts; this test asserts outcomes only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { curlInWorld, gatewayPid, leaseHolder, probeFromPod, writeHaWorld } from '../helpers/world-ha.js';
import { strait, upWorld, type TestWorld } from '../helpers/world.js';
import { waitFor } from '../helpers/wait.js';

let world: TestWorld;
let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'strait-ha-'));
  world = upWorld(['--world', writeHaWorld(tmp)]);
});
after(() => {
  world?.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);

/** Poll a check of the running world (CLI calls, logs) every 100 ms. */
const eventually = async <T>(what: string, fn: () => T | undefined | false, ms = 15_000): Promise<T> => (await waitFor(fn, ms, what, 100)) as T;

interface GwRow {
  node: string;
  haStatus: string;
  summary: string;
}
const gateways = (): GwRow[] => {
  const r = s('show', 'gateways', '--cluster', 'cluster-a', '-o', 'json');
  if (r.status !== 0) return [];
  return (JSON.parse(r.stdout) as { gateways: GwRow[] }).gateways;
};

test('kill -9 of the active gateway: the passive one takes the lease, traffic resumes, records follow', async () => {
  const rec = world.record();
  const a = rec.clusters.find((c) => c.name === 'cluster-a') as unknown as {
    pods: { name: string; ip: string }[];
    nodes: { name: string; underlayIP: string }[];
  };
  const echo = rec.clusters.find((c) => c.name === 'cluster-b')!.pods.find((p) => p.name.startsWith('echo'))!.ip;
  const clientIP = a.pods.find((p) => p.name === 'client')!.ip;

  // one active, one passive, in the store and in `strait show gateways`
  const rows = await eventually('one active and one passive gateway', () => {
    const g = gateways();
    return g.length === 2 && g.filter((x) => x.haStatus === 'active').length === 1 && g.some((x) => x.haStatus === 'passive') ? g : undefined;
  });
  const active = rows.find((g) => g.haStatus === 'active')!;
  assert.match(active.summary, /^All connections \(1\) are established$/);
  const lease = leaseHolder(world.stateDir, 'cluster-a');
  assert.equal(lease?.holder, active.node, 'the lease names the active gateway');
  const standby = rows.find((g) => g.haStatus === 'passive')!.node;

  const pid = gatewayPid(world.stateDir, 'cluster-a', active.node);
  assert.ok(pid, `the active gateway ${active.node} runs`);
  const probes = probeFromPod(world.stateDir, 'cluster-a/default/client', `http://${echo}:8080/`, 20, 5000);
  await probes.started;
  await new Promise((r) => setTimeout(r, 800));
  process.kill(pid, 'SIGKILL');
  const result = await probes.done;
  assert.ok(result.ok > 0, JSON.stringify(result));
  // traffic resumed: the last response came through the new active gateway, from the client pod's address
  const body = JSON.parse(result.last) as { remoteAddress: string; cluster: string };
  assert.equal(body.cluster, 'cluster-b');
  assert.equal(body.remoteAddress, clientIP, 'source address preserved through the new active gateway');
  assert.ok(result.maxGapMs < 5000, `traffic resumed within the probing window: ${JSON.stringify(result)}`);

  // the passive one took the lease (one more transition) and the records say so
  const after = leaseHolder(world.stateDir, 'cluster-a');
  assert.equal(after?.holder, standby);
  assert.ok((after?.transitions ?? 0) > (lease?.transitions ?? 0));
  await eventually('show gateways: the standby is active, the restarted one passive', () => {
    const g = gateways();
    return g.find((x) => x.node === standby)?.haStatus === 'active' && g.find((x) => x.node === active.node)?.haStatus === 'passive';
  });
  // exactly one active from here on (the new active one marked the dead one's record at the takeover)
  for (let i = 0; i < 5; i++) {
    const g = gateways();
    assert.equal(g.filter((x) => x.haStatus === 'active').length, 1, `exactly one active gateway: ${JSON.stringify(g)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  // the other cluster's Endpoint for cluster-a points to the new active gateway
  const standbyIP = a.nodes.find((n) => n.name === standby)!.underlayIP;
  await eventually('cluster-b sees the Endpoint of the new active gateway', () => {
    const r = s('show', 'endpoints', '--cluster', 'cluster-b', '-o', 'json');
    return r.status === 0 && r.stdout.includes(`"${standbyIP}"`) && !r.stdout.includes(`"${a.nodes.find((n) => n.name === active.node)!.underlayIP}"`);
  });
  // the node agent followed the announcement
  const worker = a.nodes.find((n) => n.name === 'worker')!;
  const agent = JSON.parse(curlInWorld(rec.supervisorPid, `http://${worker.underlayIP}:9464/records`)) as { gateway: string };
  assert.equal(agent.gateway, standbyIP);
  // and a fresh request works from the client pod
  const curl = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', `http://${echo}:8080/`]);
  assert.equal(curl.status, 0, curl.stderr);
  assert.equal(JSON.parse(curl.stdout).remoteAddress, clientIP);
});

test('SIGSTOP of the active gateway: the other one takes the lease and marks the frozen one passive; after SIGCONT it stays fenced and publishes passive (exactly one active throughout)', async () => {
  const rec = world.record();
  const echo = rec.clusters.find((c) => c.name === 'cluster-b')!.pods.find((p) => p.name.startsWith('echo'))!.ip;
  const rows = await eventually('one active and one passive gateway', () => {
    const g = gateways();
    return g.length === 2 && g.filter((x) => x.haStatus === 'active').length === 1 && g.some((x) => x.haStatus === 'passive') ? g : undefined;
  });
  const frozen = rows.find((g) => g.haStatus === 'active')!.node;
  const other = rows.find((g) => g.haStatus === 'passive')!.node;
  const before = leaseHolder(world.stateDir, 'cluster-a');
  assert.equal(before?.holder, frozen);
  const pid = gatewayPid(world.stateDir, 'cluster-a', frozen);
  assert.ok(pid, `the active gateway ${frozen} runs`);
  const stoppedAt = Date.now();
  process.kill(pid, 'SIGSTOP');
  let resumed = false;
  try {
    // the lease expires (700 ms in the world): the other one takes it and marks the frozen one's record
    const g = await eventually('show gateways: the other one active, the frozen one passive (lost the lease)', () => {
      const r = gateways();
      const f = r.find((x) => x.node === frozen);
      return r.find((x) => x.node === other)?.haStatus === 'active' && f?.haStatus === 'passive' ? r : undefined;
    });
    console.log(`# SIGSTOP -> the records show the frozen gateway passive and the other active: ${Date.now() - stoppedAt} ms (CLI polled every 100 ms)`);
    assert.equal(g.filter((x) => x.haStatus === 'active').length, 1, JSON.stringify(g));
    assert.match(g.find((x) => x.node === frozen)!.summary, new RegExp(`^Lost the lease to ${other} .*not reachable$`));
    const taken = leaseHolder(world.stateDir, 'cluster-a');
    assert.equal(taken?.holder, other);
    assert.ok((taken?.transitions ?? 0) > (before?.transitions ?? 0));
    // the frozen one's Endpoint is gone: cluster-a lists only the new active gateway's
    const frozenIP = (rec.clusters.find((c) => c.name === 'cluster-a') as unknown as { nodes: { name: string; underlayIP: string }[] }).nodes.find(
      (n) => n.name === frozen,
    )!.underlayIP;
    await eventually('the frozen gateway has no Endpoint', () => {
      const r = s('show', 'endpoints', '--cluster', 'cluster-a', '-o', 'json');
      return r.status === 0 && !r.stdout.includes(`"${frozenIP}"`);
    });
    process.kill(pid, 'SIGCONT');
    resumed = true;
    // resumed: it finds the lease taken, stays fenced and says passive; never two active gateways
    for (let i = 0; i < 15; i++) {
      const r = gateways();
      assert.equal(r.filter((x) => x.haStatus === 'active').length, 1, `exactly one active gateway after SIGCONT: ${JSON.stringify(r)}`);
      assert.equal(r.find((x) => x.node === other)?.haStatus, 'active');
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(leaseHolder(world.stateDir, 'cluster-a')?.holder, other, 'the resumed gateway did not take the lease back');
    const curl = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', `http://${echo}:8080/`]);
    assert.equal(curl.status, 0, curl.stderr);
  } finally {
    if (!resumed) process.kill(pid, 'SIGCONT');
  }
});
