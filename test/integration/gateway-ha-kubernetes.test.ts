// Gateway HA in Kubernetes mode (docs/gateway-and-agent.md): two gateway HA instances (the daemon's startGatewayHa,
// data plane without TUN) against a real kube-apiserver, as the strait-gateway
// ServiceAccount after `kubectl apply -k deploy/` (so deploy/rbac/gateway.yaml is what they
// may do). One holds the coordination.k8s.io/v1 Lease `strait-gateway` in the pod
// namespace with client-go's fields; it stops renewing; the other takes over after the
// lease duration (one more leaseTransition), marks the former holder's Gateway record
// passive, and kubectl reads it all. A stale resourceVersion is refused (409 -> conflict).
// With gateway Node objects (label submariner.io/gateway=true) the liveness link needs no
// ha.members: the active gateway's process killed -9, the passive one takes over at once.
// Short timings (4 s / 3 s / 1 s) keep the file fast; the defaults are 15 s / 10 s / 2 s
// (STRAIT_TEST_K8S_LEASE=15,10,2 runs it with them).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import { LEASE_KIND, type LeaseSpec } from '../../src/multicluster/control/gateway-ha/index.js';
import { brokerKubeconfig, OPERATOR_NAMESPACE, readGateway } from '../../src/multicluster/control/clusterset/index.js';
import { openKubernetesStore, type KubeObject } from '../../src/platform/store/index.js';
import type { Gateway } from '../../src/multicluster/dataplane/gateway/index.js';
import { startHaTestGateway } from '../helpers/gateway-ha-k8s.js';
import { startGatewayHa, type GatewayHa } from '../../src/multicluster/control/gateway-ha/index.js';
import { waitFor } from '../helpers/wait.js';
import { freeTcpPort, freeUdpPort } from '../helpers/free-port.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const NS = 'strait-system';
// STRAIT_TEST_K8S_LEASE=15,10,2 runs it with client-go's defaults (a slower test)
const [ld, rd, rp] = (process.env['STRAIT_TEST_K8S_LEASE'] ?? '4,3,1').split(',').map(Number);
const TIMING = { leaseDurationSeconds: ld ?? 4, renewDeadlineSeconds: rd ?? 3, retryPeriodSeconds: rp ?? 1 };
let cluster: TestCluster | undefined;
let skip: string | undefined;
let tmp = '';
let kubeconfig = '';
const running: { gw: Gateway; ha?: GatewayHa }[] = [];

before(
  async () => {
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
    tmp = mkdtempSync(join(tmpdir(), 'strait-gw-k8s-'));
    const ok = async (args: string[]): Promise<string> => {
      const x = await r.kubectlAsync(args);
      assert.equal(x.status, 0, `kubectl ${args.join(' ')}: ${x.stderr}`);
      return x.stdout;
    };
    await ok(['create', 'namespace', NS]);
    await ok(['apply', '-k', join(root, 'deploy')]);
    await ok(['wait', '--for', 'condition=Established', '--timeout', '60s', 'crd', '-l', 'app.kubernetes.io/part-of=strait']);
    // the gateway's identity: a token of its ServiceAccount
    const token = (await ok(['create', 'token', 'strait-gateway', '-n', NS, '--duration', '1h'])).trim();
    kubeconfig = join(tmp, 'gateway.kubeconfig');
    writeFileSync(kubeconfig, brokerKubeconfig(r.server, r.caPem, token), { mode: 0o600 });
  },
  { timeout: 3_600_000 },
);

after(async () => {
  for (const x of running) {
    await x.ha?.stop().catch(() => undefined);
    await x.gw.stop().catch(() => undefined);
  }
  await cluster?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function gateway(name: string, logs: string[]): Promise<{ gw: Gateway; ha: GatewayHa; lost: () => boolean }> {
  const gw = await startHaTestGateway(name, kubeconfig, TIMING);
  const entry: { gw: Gateway; ha?: GatewayHa } = { gw };
  running.push(entry);
  let lost = false;
  const ha = await startGatewayHa(
    gw,
    (level, msg) => logs.push(`${name} ${level}: ${msg}`),
    () => {
      lost = true;
    },
    { STRAIT_STORE: 'kubernetes', STRAIT_POD_NAMESPACE: NS },
  );
  entry.ha = ha;
  return { gw, ha, lost: () => lost };
}

interface LeaseJson {
  metadata: { resourceVersion: string };
  spec: Required<LeaseSpec>;
}
const lease = async (): Promise<LeaseJson | undefined> => {
  const r = await cluster!.kubectlAsync(['get', 'lease', 'strait-gateway', '-n', NS, '-o', 'json']);
  return r.status === 0 ? (JSON.parse(r.stdout) as LeaseJson) : undefined;
};
const gatewayRows = async (): Promise<{ node: string; haStatus: string; summary: string }[]> => {
  const r = await cluster!.kubectlAsync(['get', 'gateways.submariner.io', '-n', OPERATOR_NAMESPACE, '-o', 'json']);
  return r.status === 0 ? (JSON.parse(r.stdout) as { items: KubeObject[] }).items.map((o) => readGateway(o).gateway) : [];
};
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

test('Kubernetes mode: a real Lease elects one gateway; when it stops renewing the other takes over after the lease duration, and the records follow', async (t) => {
  if (skip) {
    t.skip(skip);
    return;
  }
  const logs: string[] = [];
  const a = await gateway('gw-1', logs);
  await waitFor(() => a.ha.elector.isActive, 20_000, 'gw-1 active');
  const b = await gateway('gw-2', logs);
  await waitFor(() => logs.some((l) => l.startsWith('gw-2 info: lease held by gw-1')), 20_000, 'gw-2 passive');
  assert.equal(a.ha.mode, 'kubernetes');
  assert.equal(a.ha.namespace, NS);
  assert.equal(a.ha.recordsNamespace, OPERATOR_NAMESPACE);

  // the Lease as client-go's leader election writes it, readable with kubectl
  const l0 = (await lease())!;
  assert.equal(l0.spec.holderIdentity, 'gw-1');
  assert.equal(l0.spec.leaseDurationSeconds, TIMING.leaseDurationSeconds);
  assert.equal(l0.spec.leaseTransitions, 0);
  assert.match(l0.spec.acquireTime, MICRO);
  assert.match(l0.spec.renewTime, MICRO);
  // renewals move renewTime, not acquireTime
  const l1 = await waitFor(
    async () => {
      const x = await lease();
      return x && x.spec.renewTime !== l0.spec.renewTime ? x : undefined;
    },
    10_000,
    'a renewal',
    200,
  );
  assert.equal(l1.spec.acquireTime, l0.spec.acquireTime);
  assert.equal(l1.spec.holderIdentity, 'gw-1');
  const table = await cluster!.kubectlAsync(['get', 'lease', '-n', NS]);
  assert.match(table.stdout, /strait-gateway\s+gw-1/, 'kubectl get lease shows the holder');

  // each gateway publishes its own Gateway record in Submariner's operator namespace (not the pod's)
  await waitFor(
    async () => {
      const g = await gatewayRows();
      return g.find((x) => x.node === 'gw-1')?.haStatus === 'active' && g.find((x) => x.node === 'gw-2')?.haStatus === 'passive';
    },
    20_000,
    'gw-1 active and gw-2 passive in the Gateway records',
    200,
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}\n${logs.join('\n')}`);
  });

  // a write with a stale resourceVersion loses (409 Conflict)
  const store = openKubernetesStore({ kubeConfigPath: kubeconfig });
  try {
    const cur = (await store.get<KubeObject<LeaseSpec>>(LEASE_KIND, 'strait-gateway', NS))!;
    await assert.rejects(
      store.update({ ...cur, metadata: { ...cur.metadata, resourceVersion: l0.metadata.resourceVersion }, spec: { ...cur.spec, holderIdentity: 'intruder' } }),
      (e: unknown) => isStraitError(e) && e.code === 'STRAIT_ERR_CONFLICT',
    );
  } finally {
    await store.close();
  }

  // gw-1 stops renewing (frozen, or cut off from the API server): gw-2 takes the lease once it is
  // unchanged for leaseDurationSeconds (polled every retryPeriod / 2)
  const stoppedAt = Date.now();
  a.ha.elector.stop();
  // the last renewal (one in flight when it stopped has landed by then)
  await new Promise((r) => setTimeout(r, 500));
  const last = (await lease())!;
  assert.equal(last.spec.holderIdentity, 'gw-1');
  await waitFor(() => b.ha.elector.isActive, (TIMING.leaseDurationSeconds + TIMING.retryPeriodSeconds) * 1000 + 10_000, 'gw-2 active', 50);
  const takeoverMs = Date.now() - stoppedAt;
  console.log(
    `# takeover after the holder stopped renewing: ${takeoverMs} ms (leaseDuration ${TIMING.leaseDurationSeconds} s + retryPeriod ${TIMING.retryPeriodSeconds} s = ${(TIMING.leaseDurationSeconds + TIMING.retryPeriodSeconds) * 1000} ms)`,
  );
  const l2 = (await lease())!;
  const unrenewedMs = Date.parse(l2.spec.acquireTime) - Date.parse(last.spec.renewTime);
  console.log(`# the lease was taken ${unrenewedMs} ms after its last renewal`);
  assert.ok(unrenewedMs >= TIMING.leaseDurationSeconds * 1000, `taken only once unrenewed for leaseDurationSeconds (${unrenewedMs} ms)`);
  assert.equal(l2.spec.holderIdentity, 'gw-2');
  assert.equal(l2.spec.leaseTransitions, 1);
  assert.notEqual(l2.spec.acquireTime, l0.spec.acquireTime);
  assert.equal(b.gw.haStatus, 'active');
  // gw-1 is fenced (its renew deadline passed): it reports passive and sends nothing
  assert.equal(a.gw.isFenced, true);
  assert.equal(a.gw.gatewayRecord().haStatus, 'passive');
  // the records: exactly one active gateway, the former holder marked passive
  const rows = await waitFor(
    async () => {
      const g = await gatewayRows();
      return g.find((x) => x.node === 'gw-2')?.haStatus === 'active' && g.find((x) => x.node === 'gw-1')?.haStatus === 'passive' ? g : undefined;
    },
    20_000,
    'gw-2 active and gw-1 passive in the Gateway records',
    200,
  );
  assert.equal(rows.filter((x) => x.haStatus === 'active').length, 1, JSON.stringify(rows));
  assert.match(rows.find((x) => x.node === 'gw-1')!.summary, /Lost the lease to gw-2|fenced/);
  assert.ok(
    logs.some((l) => /gw-2 info: holding the lease strait-system\/strait-gateway: active \(epoch 1; expired/.test(l)),
    logs.join('\n'),
  );
  assert.equal(a.lost(), false);
});

/** A gateway Node object as the kubelet registers it (status may be set on create), on a loopback address of its own. */
async function addNode(name: string, ip: string): Promise<void> {
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'submariner.io/gateway': 'true' } },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  };
  const r = await cluster!.kubectlAsync(['create', '-f', '-'], JSON.stringify(node));
  assert.equal(r.status, 0, r.stderr);
}

/**
 * HA members as child processes (test/fixtures/gateway-ha-member.ts) sharing the liveness port
 * `port` and the lease timing; each started under a label of its own (a successor has its
 * predecessor's node name), with what it printed.
 */
function memberProcesses(port: number, timing: string) {
  const fixture = join(root, 'dist', 'test', 'fixtures', 'gateway-ha-member.js');
  const out = new Map<string, string>();
  const members = new Map<string, ChildProcess>();
  const start = (label: string, name = label, ...extra: string[]): ChildProcess => {
    const p = spawn(process.execPath, [fixture, name, kubeconfig, NS, String(port), timing, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    out.set(label, '');
    p.stdout?.setEncoding('utf8').on('data', (d: string) => out.set(label, (out.get(label) ?? '') + d));
    p.stderr?.setEncoding('utf8').on('data', (d: string) => out.set(label, (out.get(label) ?? '') + d));
    members.set(label, p);
    return p;
  };
  const said = (label: string, re: RegExp): boolean => re.test(out.get(label) ?? '');
  const all = (): string => [...out].map(([n, o]) => `--- ${n}\n${o}`).join('\n');
  const killAll = (): void => {
    for (const p of members.values()) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  };
  return { start, said, all, killAll };
}

const holderIs = async (name: string): Promise<boolean> =>
  (await cluster!.kubectlAsync(['get', 'lease', 'strait-gateway', '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}'])).stdout === name;

/** gw-node-1 active, gw-node-2 passive with its liveness link to gw-node-1 established */
async function activeAndPassive(m: ReturnType<typeof memberProcesses>, port: number, first: ChildProcess): Promise<void> {
  await waitFor(() => m.said('gw-node-1', /^active$/m), 30_000, `gw-node-1 active\n${m.all()}`, 50);
  m.start('gw-node-2');
  await waitFor(() => m.said('gw-node-2', /lease held by gw-node-1: passive/), 30_000, `gw-node-2 passive\n${m.all()}`, 50);
  // its own Node object only now (a slow first list, a node registered late): it listens then
  await addNode('gw-node-2', '127.0.0.32');
  await waitFor(() => m.said('gw-node-2', /liveness link: listening on 127\.0\.0\.32:/), 30_000, `gw-node-2 listening\n${m.all()}`, 50);
  // the passive one holds its link to the active one's address from gw-node-1's Node object
  await waitFor(
    async () => (await holderIs('gw-node-1')) && linkEstablished('127.0.0.31', port),
    20_000,
    `gw-node-2's liveness link to 127.0.0.31:${port}\n${m.all()}`,
    100,
  );
  assert.equal(first.exitCode, null);
}

/**
 * The frame of the liveness-link cases: gw-node-1's Node object, no Lease, a liveness port and
 * member processes with a long lease (20 s), so that only the link or a handover can explain
 * a change within seconds; the processes and Node objects gone after.
 */
async function withMembers(t: TestContext, body: (m: ReturnType<typeof memberProcesses>, port: number) => Promise<void>): Promise<void> {
  if (skip) {
    t.skip(skip);
    return;
  }
  await addNode('gw-node-1', '127.0.0.31');
  await cluster!.kubectlAsync(['delete', 'lease', 'strait-gateway', '-n', NS, '--ignore-not-found']);
  const port = await freeTcpPort();
  const m = memberProcesses(port, '20,15,2');
  try {
    await body(m, port);
  } finally {
    m.killAll();
    await cluster!.kubectlAsync(['delete', 'node', 'gw-node-1', 'gw-node-2', '--ignore-not-found']);
  }
}

test('Kubernetes mode, the liveness link from the gateway nodes: the active gateway process killed -9, the passive one takes the lease at once, not after the lease duration', (t) =>
  withMembers(t, async (m, port) => {
    const first = m.start('gw-node-1');
    await activeAndPassive(m, port, first);
    const killedAt = Date.now();
    first.kill('SIGKILL');
    await waitFor(() => m.said('gw-node-2', /^active$/m), 15_000, `gw-node-2 active after the kill\n${m.all()}`, 20);
    const takeoverMs = Date.now() - killedAt;
    console.log(`# kill -9 of the active gateway -> the passive one active in ${takeoverMs} ms (lease duration 20 s)`);
    assert.ok(m.said('gw-node-2', /liveness link to the active gateway gw-node-1 closed: taking the lease over/), m.all());
    assert.ok(takeoverMs < 10_000, `the link, not the 20 s lease expiry, decided (${takeoverMs} ms)`);
    assert.ok(await holderIs('gw-node-2'));
  }));

test("Kubernetes mode, a rolling update of the active gateway (its successor waits on the node's ports): the lease stays the node's, no new transition, the passive gateway keeps out of it and follows the successor", (t) =>
  withMembers(t, async (m, port) => {
    // gw-node-1's tunnel port: its successor finds it held and waits (dataplane/handover)
    const tunnelPort = String(await freeUdpPort());
    const first = m.start('gw-node-1', 'gw-node-1', tunnelPort);
    await activeAndPassive(m, port, first);
    const transitions = (await lease())?.spec.leaseTransitions;
    m.start('successor', 'gw-node-1', tunnelPort);
    await waitFor(() => m.said('successor', /is held by another process on this node/), 30_000, `the successor waits\n${m.all()}`, 50);
    const stoppedAt = Date.now();
    first.kill('SIGTERM');
    await waitFor(() => m.said('successor', /^active$/m), 15_000, `the successor active\n${m.all()}`, 20);
    const ms = Date.now() - stoppedAt;
    console.log(`# the active gateway stopped with its successor waiting -> the successor active in ${ms} ms (lease duration 20 s)`);
    assert.ok(ms < 5000, `the handover, not the 20 s lease expiry, decided (${ms} ms)`);
    assert.ok(m.said('gw-node-1', /stopping: the successor on this node takes the lease over/), m.all());
    assert.ok(m.said('successor', /holding the lease .*: active \(epoch \d+; held by this node before a restart\)/), m.all());
    assert.ok(m.said('gw-node-2', /the active gateway gw-node-1 hands the lease over to its successor on the same node/), m.all());
    // the passive one follows the successor's liveness link, and never took the lease
    await waitFor(() => linkEstablished('127.0.0.31', port), 10_000, `gw-node-2's link to the successor\n${m.all()}`, 100);
    const l = await lease();
    assert.equal(l?.spec.holderIdentity, 'gw-node-1');
    assert.equal(l?.spec.leaseTransitions, transitions, 'no new transition: the agents and peers see the same active gateway');
    assert.ok(!m.said('gw-node-2', /^active$/m), m.all());
    assert.ok(!m.said('gw-node-2', /taking the lease over/), m.all());
  }));

/** An established TCP connection to address:port in this network namespace (ss), i.e. a liveness link. */
function linkEstablished(address: string, port: number): boolean {
  const r = spawnSync('ss', ['-Htn', 'state', 'established', 'dst', `${address}:${port}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim().length > 0;
}
