// A Service reached from another cluster whose only endpoint runs on a non-gateway node: the
// connection arrives on the receiving cluster's gateway node, whose service proxy DNATs it to
// the pod on the worker; the pod's reply has to come back through the gateway node so that
// conntrack there puts the ClusterIP back as its source (as kube-proxy + Submariner do with the
// node agent's kubeProxyReturnPath, docs/gateway-and-agent.md). Without it the reply went
// into the worker's node agent and over VXLAN straight to the gateway daemon, the client saw
// a SYN-ACK from the pod IP instead of the ClusterIP, and curl timed out.
// Real traffic: curl from cluster-a's client pod (on its worker) to cluster-b's ClusterIP, to
// cluster-b.echo.default.svc.clusterset.local and to the clusterset IP, each answered by
// cluster-b's echo on cluster-b's worker with the client's own address seen. And with two
// gateway nodes in cluster-b (HA): the passive gateway node is one of the others, so an
// endpoint there answers too (its gateway daemon routes the replies to the active node).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { leaseHolder, twoClusterWorld } from '../../helpers/world-ha.js';
import { strait, upWorld, type TestWorld } from '../../helpers/world.js';

/** cluster-b with two gateway nodes, an echo Service on each of its three nodes */
const HA_B_WORLD = `githost: false
mesh: false
clusters:
  - name: cluster-a
    clusterCIDR: 10.1.0.0/16
    serviceCIDR: 100.1.0.0/16
    nodes:
      - { name: gateway, role: gateway }
      - { name: worker, role: worker }
    workloads:
      - namespace: default
        pods: [{ name: client, image: strait/idle, node: worker }]
  - name: cluster-b
    clusterCIDR: 10.2.0.0/16
    serviceCIDR: 100.2.0.0/16
    nodes:
      - { name: gateway, role: gateway }
      - { name: gateway-2, role: gateway }
      - { name: worker, role: worker }
    workloads:
      - namespace: default
        deployments:
${['gateway', 'gateway-2', 'worker'].map((n) => `          - { name: echo-${n}, image: strait/echo, replicas: 1, port: 8080, node: ${n} }`).join('\n')}
        services:
${['gateway', 'gateway-2', 'worker'].map((n) => `          - { name: echo-${n}, ports: [{ name: http, port: 8080 }] }`).join('\n')}
`;

let world: TestWorld;
let tmp: string;
before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'strait-svc-worker-'));
});
after(() => {
  world?.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

function startWorld(name: string, text: string): void {
  world?.cleanup();
  const file = join(tmp, `${name}.yaml`);
  writeFileSync(file, text);
  world = upWorld(['--world', file]);
}

const s = (...args: string[]) => strait([...args, '--state-dir', world.stateDir]);

async function eventually(what: string, fn: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Echo {
  remoteAddress: string;
  cluster: string;
  node: string;
}

/** curl from cluster-a's client pod: the HTTP code, the echo's answer and curl's complaint */
function curlFromClient(url: string): { code: string; echo?: Echo; stderr: string } {
  const r = world.exec('cluster-a/default/client', ['curl', '-s', '-m', '5', '-w', '\\n%{http_code}', url]);
  const lines = r.stdout.trim().split('\n').filter(Boolean);
  const code = lines.pop() ?? '';
  return { code, ...(code === '200' ? { echo: JSON.parse(lines.join('\n')) as Echo } : {}), stderr: r.stderr };
}

test("a ClusterIP whose endpoint runs on another cluster's worker node answers, by address and by clusterset name", async () => {
  // cluster-b's echo pinned to its worker node, behind a ClusterIP Service
  startWorld('worker', twoClusterWorld({ haGateway: false, echoService: true }));
  const rec = world.record();
  const b = rec.clusters.find((c) => c.name === 'cluster-b')!;
  const clusterIP = b.services.find((x) => x.name === 'echo')!.clusterIP!;
  const echoPod = b.pods.find((p) => p.name.startsWith('echo-'))!;
  const clientIP = rec.clusters.find((c) => c.name === 'cluster-a')!.pods.find((p) => p.name === 'client')!.ip;

  // the pod itself answers (pod -> pod goes through both node agents' TUN devices): the link is up
  const direct = curlFromClient(`http://${echoPod.ip}:8080/`);
  assert.equal(direct.code, '200', `the echo pod ${echoPod.ip}: ${direct.stderr}`);
  assert.equal(direct.echo?.node, 'worker', 'the echo runs on cluster-b worker node');

  // its ClusterIP, DNATed on cluster-b's gateway node: the reply must come back through it
  const viaClusterIP = curlFromClient(`http://${clusterIP}:8080/`);
  assert.equal(viaClusterIP.code, '200', `cluster-b's ClusterIP ${clusterIP}: ${viaClusterIP.stderr}`);
  assert.equal(viaClusterIP.echo?.cluster, 'cluster-b');
  assert.equal(viaClusterIP.echo?.node, 'worker');
  assert.equal(viaClusterIP.echo?.remoteAddress, clientIP, 'the echo sees the client pod, not a masqueraded node address');

  // exported: the per-cluster clusterset name is that ClusterIP, the clusterset IP leads to it
  await eventually('cluster-b joined', () => s('show', 'networks', '--cluster', 'cluster-b', '-o', 'json').stdout.includes('100.2.0.0/16'));
  const ex = s('export', 'service', '--namespace', 'default', 'echo', '--cluster', 'cluster-b');
  assert.equal(ex.status, 0, ex.stderr);
  const dig = (name: string) => world.exec('cluster-a/default/client', ['dig', '+short', '+time=1', '+tries=2', name]).stdout.trim();
  const byName = 'cluster-b.echo.default.svc.clusterset.local';
  const setName = 'echo.default.svc.clusterset.local';
  await eventually(`${byName} resolves to cluster-b's ClusterIP`, () => dig(byName) === clusterIP);
  await eventually(`${setName} resolves`, () => /^100\.1\./.test(dig(setName)));
  for (const url of [`http://${byName}:8080/`, `http://${setName}:8080/`]) {
    const c = curlFromClient(url);
    assert.equal(c.code, '200', `${url}: ${c.stderr}`);
    assert.equal(c.echo?.cluster, 'cluster-b', url);
    assert.equal(c.echo?.node, 'worker', url);
    assert.equal(c.echo?.remoteAddress, clientIP, url);
  }
});

test("with two gateway nodes, a ClusterIP answers from each node, the passive gateway's included", async () => {
  startWorld('ha', HA_B_WORLD);
  const rec = world.record();
  const b = rec.clusters.find((c) => c.name === 'cluster-b')!;
  const clientIP = rec.clusters.find((c) => c.name === 'cluster-a')!.pods.find((p) => p.name === 'client')!.ip;
  let holder = '';
  await eventually("cluster-b's lease held", () => (holder = leaseHolder(world.stateDir, 'cluster-b')?.holder ?? '') !== '');
  for (const node of ['gateway', 'gateway-2', 'worker']) {
    const clusterIP = b.services.find((x) => x.name === `echo-${node}`)!.clusterIP!;
    const c = curlFromClient(`http://${clusterIP}:8080/`);
    const role = node === holder ? 'the active gateway' : node === 'worker' ? 'the worker' : 'the passive gateway';
    assert.equal(c.code, '200', `echo-${node} (${clusterIP}, on ${role}): ${c.stderr}`);
    assert.equal(c.echo?.node, node);
    assert.equal(c.echo?.remoteAddress, clientIP, `echo-${node} sees the client pod`);
  }
});
