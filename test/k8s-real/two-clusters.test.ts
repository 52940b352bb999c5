// Acceptance against two REAL Kubernetes clusters (issue 16): test/k8s/clusters.sh up 2
// (kubelet + containerd + kube-proxy on a gateway node and a worker node per cluster, each
// node in its own network namespace), strait deployed as a user would: deploy-broker on A,
// join on both with kubeconfigs, `kubectl apply -k deploy/`. A pod on A's worker fetches
// from a pod on B's worker: HTTP 200 and the server sees the client pod's own IP.
//
// Gate (npm test runs it only when all of this holds, else it is skipped with the reason):
//   STRAIT_K8S_REAL=1 (opt-in until the suite passes and its cold cost is measured for CI);
//   root; containerd, runc, the CNI plugins and etcd installed (scripts/setup-system.sh);
//   kubelet, kube-controller-manager, kube-scheduler, kube-proxy, kubectl and kube-apiserver
//   already built in ~/.cache/strait/k8s/<version>/ (test/k8s/build-apiserver.sh --nodes);
//   the images already built (test/k8s/build-images.sh --strait: strait.tar present);
//   no clusters up already (/run/strait-k8s absent).
// The test never builds anything (a cold build is ~an hour on 2 shared cores).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const clusters = join(root, 'test', 'k8s', 'clusters.sh');
const state = process.env['STRAIT_K8S_STATE'] ?? '/run/strait-k8s';

function gate(): string | undefined {
  if (process.env['STRAIT_K8S_REAL'] !== '1') return 'opt-in: set STRAIT_K8S_REAL=1 (real clusters, ~5 min; the tools must be built first)';
  if (process.getuid?.() !== 0) return 'needs root';
  for (const t of ['containerd', 'ctr', 'runc', 'etcd', 'nsenter']) {
    if (spawnSync('sh', ['-c', `command -v ${t}`]).status !== 0) return `'${t}' is not installed (scripts/setup-system.sh)`;
  }
  if (!existsSync('/usr/lib/cni/bridge')) return 'the CNI plugins are not installed (scripts/setup-system.sh)';
  const cache = execFileSync(join(root, 'test', 'k8s', 'build-apiserver.sh'), ['--print'], { encoding: 'utf8' }).trim();
  for (const b of ['kube-apiserver', 'kubectl', 'kubelet', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy']) {
    if (!existsSync(join(cache, b))) return `${b} is not built (test/k8s/build-apiserver.sh --nodes)`;
  }
  if (!existsSync(join(cache, 'images', 'strait.tar'))) return 'the images are not built (test/k8s/build-images.sh --strait)';
  if (existsSync(state)) return `clusters are already up (${state}); test/k8s/clusters.sh down`;
  return undefined;
}

const skip = gate();
const work = mkdtempSync(join(tmpdir(), 'strait-k8s-real-'));
let up = false;

function sh(cmd: string, args: string[], timeoutMs = 120_000): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, cwd: work });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} -> ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}
const kubectl = (L: string, ...args: string[]): string => sh(clusters, ['kubectl', L, ...args]);
/** strait's CLI, in the link namespace (it reaches every API server) */
const strait = (...args: string[]): string => sh(clusters, ['exec', process.execPath, join(root, 'bin', 'strait.js'), ...args]);
const kubeconfig = (L: string): string => join(state, `cluster-${L}`, 'admin.kubeconfig');

before(() => {
  if (skip) return;
  const t0 = Date.now();
  sh(clusters, ['up', '2', '--strait'], 600_000);
  up = true;
  console.log(`clusters up in ${Math.round((Date.now() - t0) / 1000)} s`);
});

after(() => {
  if (up) sh(clusters, ['down'], 900_000);
  const panicOnOops = readFileSync('/proc/sys/kernel/panic_on_oops', 'utf8').trim();
  if (!skip) assert.equal(panicOnOops, '0', 'kernel.panic_on_oops restored');
});

test('two real clusters: strait deployed, a pod on A\'s worker reaches a pod on B\'s worker with its own IP', { skip: skip ?? false, timeout: 900_000 }, () => {
  // the CRDs first: deploy-broker and join write Submariner's kinds (without them join fails
  // with 'Cluster "*" not found in namespace "submariner-k8s-broker"': the list gets a 404)
  for (const L of ['a', 'b']) {
    kubectl(L, 'apply', '--server-side', '-f', join(root, 'deploy', 'crds.yaml'));
    kubectl(L, 'wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s');
  }
  // broker on A, both clusters join with their kubeconfigs
  strait('deploy-broker', '--kubeconfig', kubeconfig('a'), '--file', join(work, 'broker-info.subm'));
  for (const [L, i] of [['a', 1], ['b', 2]] as const) {
    strait('join', join(work, 'broker-info.subm'), '--clusterid', `cluster-${L}`, '--kubeconfig', kubeconfig(L),
      '--clustercidr', `10.${10 * i}.0.0/16`, '--servicecidr', `10.${10 * i + 1}.0.0/16`);
  }
  // deploy/ with the locally built image
  const rendered = kubectl('a', 'kustomize', join(root, 'deploy')).replace(/image: strait(:[^\s]*)?$/gm, 'image: localhost/strait:test');
  for (const [L, i, R, j] of [['a', 1, 'b', 2], ['b', 2, 'a', 1]] as const) {
    // the cluster-specific values of deploy/config.yaml (what a kustomize patch would set)
    const subnets = (k: number): string => `[10.${10 * k}.0.0/16, 10.${10 * k + 1}.0.0/16]`;
    const file = join(work, `deploy-${L}.yaml`);
    const text = rendered
      .replace('clusterId: cluster-a', `clusterId: cluster-${L}`)
      .replace('localSubnets: [10.1.0.0/16, 100.1.0.0/16]', `localSubnets: ${subnets(i)}`)
      .replace('- { clusterId: cluster-b, endpoint: 192.0.2.2, port: 4500, subnets: [10.2.0.0/16, 100.2.0.0/16] }',
        `- { clusterId: cluster-${R}, endpoint: 172.30.${j}.2, port: 4500, subnets: ${subnets(j)} }`)
      .replace('remoteSubnets: [10.2.0.0/16, 100.2.0.0/16]', `remoteSubnets: ${subnets(j)}`)
      .replace('gateway: { address: 192.0.2.1, port: 4800 }', `gateway: { address: 172.30.${i}.2, port: 4800 }`);
    assert.notEqual(text, rendered);
    assert.doesNotMatch(text, /192\.0\.2\./, 'every placeholder address replaced');
    writeFileSync(file, text);
  }
  for (const L of ['a', 'b']) {
    const file = join(work, `deploy-${L}.yaml`);
    // a second apply once the CRDs of the first are established
    const r = spawnSync(clusters, ['kubectl', L, 'apply', '--server-side', '-f', file], { encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) {
      kubectl(L, 'wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s');
      kubectl(L, 'apply', '--server-side', '-f', file);
    }
  }
  for (const L of ['a', 'b']) {
    sh(clusters, ['kubectl', L, '-n', 'strait-system', 'wait', '--for=condition=Ready', 'pod', '--all', '--timeout=300s'], 320_000);
    const restarts = kubectl(L, '-n', 'strait-system', 'get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.containerStatuses[*].restartCount} {end}');
    assert.doesNotMatch(restarts, /=[1-9]/, `cluster-${L}: restarts: ${restarts}`);
  }
  // the server on B's worker, the client on A's worker
  kubectl('b', 'run', 'echo', '--image=localhost/strait-test:1', '--image-pull-policy=Never', '--overrides={"spec":{"nodeName":"b-wk"}}');
  kubectl('a', 'run', 'client', '--image=localhost/strait-test:1', '--image-pull-policy=Never', '--overrides={"spec":{"nodeName":"a-wk"}}', '--command', '--', 'sleep', '3600');
  kubectl('b', 'wait', '--for=condition=Ready', 'pod/echo', '--timeout=120s');
  kubectl('a', 'wait', '--for=condition=Ready', 'pod/client', '--timeout=120s');
  const serverIp = kubectl('b', 'get', 'pod', 'echo', '-o', 'jsonpath={.status.podIP}');
  const clientIp = kubectl('a', 'get', 'pod', 'client', '-o', 'jsonpath={.status.podIP}');
  const t0 = Date.now();
  let response = '';
  for (let i = 0; i < 30 && !/^HTTP\/1\.[01] 200 /.test(response); i++) {
    // the test image's `get`: an HTTP/1.0 GET with nc, the whole response
    const r = spawnSync(clusters, ['kubectl', 'a', 'exec', 'client', '--', 'get', serverIp, '8080', '/cgi-bin/ip'], { encoding: 'utf8', timeout: 20_000 });
    response = r.stdout ?? '';
  }
  assert.match(response, /^HTTP\/1\.[01] 200 /, `no HTTP 200 after ${Date.now() - t0} ms: ${response}`);
  const body = response.split('\r\n\r\n')[1]?.trim();
  assert.equal(body, clientIp, `the server saw ${body ?? 'nothing'} (client ${clientIp})`);
  console.log(`pod on a-wk -> pod on b-wk: HTTP 200 after ${Date.now() - t0} ms`);
  // B connected, from A: `strait show connections --kubeconfig` where the CLI has it (issue 16
  // item 4), else the Gateway record it reads (Submariner's shape, in submariner-operator)
  const show = spawnSync(clusters, ['exec', process.execPath, join(root, 'bin', 'strait.js'), 'show', 'connections', '--kubeconfig', kubeconfig('a'), '-o', 'json'], { encoding: 'utf8', timeout: 60_000 });
  if (show.status === 0) {
    assert.match(show.stdout, /cluster-b/);
    assert.match(show.stdout, /"connected"/);
  } else {
    const gws = JSON.parse(kubectl('a', '-n', 'submariner-operator', 'get', 'gateways.submariner.io', '-o', 'json')) as
      { items: { status?: { haStatus?: string; connections?: { status: string; endpoint: { cluster_id: string } }[] } }[] };
    const active = gws.items.filter((g) => g.status?.haStatus === 'active');
    assert.equal(active.length, 1, JSON.stringify(gws.items.map((g) => g.status)));
    assert.ok(active[0]!.status!.connections!.some((c) => c.endpoint.cluster_id === 'cluster-b' && c.status === 'connected'), JSON.stringify(active[0]!.status));
  }
});
