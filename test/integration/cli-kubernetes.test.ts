// The multicluster commands in Kubernetes mode (docs/kubernetes.md "The CLI in Kubernetes
// mode"), through `strait` itself, against two real kube-apiservers (clusters A and B) named
// by ONE kubeconfig with a context each: deploy-broker, join, show, export/unexport, verify
// and diagnose take --kubeconfig/--context (one shared definition) and read the records
// where the gateways write them (Submariner's shape in submariner-operator; written here
// with the gateway's own publisher, publishGatewayRecords), and the ServiceExports the
// control module's agent syncs (a MulticlusterAgent per cluster, in the test process).
// Before the CRDs are applied a command says which to apply (STRAIT_ERR_KUBE_CRD_MISSING,
// exit 3) and writes nothing; a missing or unreadable kubeconfig or an unknown context is
// STRAIT_ERR_KUBE_CONFIG (exit 2), an API server that does not answer
// STRAIT_ERR_STORE_UNAVAILABLE (exit 5).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  MC_KINDS as K,
  MulticlusterAgent,
  OPERATOR_NAMESPACE,
  openBrokerByUrl,
  parseBrokerInfo,
  publishGatewayRecords,
  type BrokerInfo,
  type GatewayRecords,
} from '../../src/multicluster/control/clusterset/index.js';
import { COLUMNS } from '../../src/multicluster/cli/index.js';
import { openKubernetesStore, type KubernetesResourceStore, type ResourceStore } from '../../src/platform/store/index.js';
import { waitFor } from '../helpers/wait.js';
import { freeTcpPort } from '../helpers/free-port.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';
import { installCrds } from '../k8s/store-harness.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
let a: TestCluster | undefined;
let b: TestCluster | undefined;
let skip: string | undefined;
let tmp = '';
let kubeconfig = '';
let info: BrokerInfo;
const stores: ResourceStore[] = [];
const agents: MulticlusterAgent[] = [];

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}
function strait(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [join(root, 'bin', 'strait.js'), ...args], {
      cwd: tmp,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    c.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    c.on('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}
/** strait with the two-context kubeconfig and `--context ctx` */
const on = (ctx: 'a' | 'b', args: string[]): Promise<Run> => strait([...args, '--kubeconfig', kubeconfig, '--context', ctx]);
const ok = async (r: Promise<Run>): Promise<string> => {
  const x = await r;
  assert.equal(x.status, 0, `exit ${x.status}\n${x.stdout}\n${x.stderr}`);
  return x.stdout;
};
const kubeOk = async (c: TestCluster, args: string[], input?: string): Promise<string> => {
  const r = await c.kubectlAsync(args, input);
  assert.equal(r.status, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** One kubeconfig, two clusters: contexts "a" and "b" (current-context "a"), and "dead" (nothing listens there). */
function twoContexts(x: TestCluster, y: TestCluster, deadPort: number): string {
  const cluster = (name: string, c: TestCluster, server = c.server) => ({
    name,
    cluster: { server, 'certificate-authority-data': Buffer.from(c.caPem).toString('base64') },
  });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'a',
    clusters: [cluster('a', x), cluster('b', y), cluster('dead', x, `https://127.0.0.1:${deadPort}`)],
    users: [
      { name: 'a', user: { token: x.token } },
      { name: 'b', user: { token: y.token } },
    ],
    contexts: [
      { name: 'a', context: { cluster: 'a', user: 'a' } },
      { name: 'b', context: { cluster: 'b', user: 'b' } },
      { name: 'dead', context: { cluster: 'dead', user: 'a' } },
    ],
  });
}

/** What a cluster's gateway publishes (its /records), for gateway node `node` connected to the other cluster. */
function records(cluster: 'cluster-a' | 'cluster-b', status: 'connected' | 'connecting', rttAvg: string): GatewayRecords {
  const [me, other, ip, otherIp, subnets, otherSubnets] =
    cluster === 'cluster-a'
      ? ['a-gw', 'cluster-b', '172.30.1.2', '172.30.2.2', ['10.10.0.0/16', '10.11.0.0/16'], ['10.20.0.0/16', '10.21.0.0/16']]
      : ['b-gw', 'cluster-a', '172.30.2.2', '172.30.1.2', ['10.20.0.0/16', '10.21.0.0/16'], ['10.10.0.0/16', '10.11.0.0/16']];
  return {
    endpoint: {
      clusterId: cluster,
      hostname: me as string,
      endpointIP: ip as string,
      publicIP: ip as string,
      cableDriver: 'strait-psk',
      subnets: subnets as string[],
    },
    gateway: {
      node: me as string,
      haStatus: 'active',
      summary: status === 'connected' ? 'All connections (1) are established' : '0 connections out of 1 are established',
    },
    connections: [
      {
        gateway: me as string,
        cluster: other as string,
        remoteIP: otherIp as string,
        nat: 'no',
        cableDriver: 'strait-psk',
        subnets: otherSubnets as string[],
        status,
        rttAvg,
      },
    ],
  };
}

/** Publish a cluster's gateway records as its gateway does: into the cluster (Submariner's shape) and its Endpoint onto the broker. */
async function publish(c: TestCluster, recs: GatewayRecords): Promise<void> {
  const local = openKubernetesStore({ kubeconfig: c.kubeconfig });
  const broker = openBrokerByUrl(info.brokerURL, info.clientToken, info.brokerCA);
  try {
    await publishGatewayRecords(local, broker, recs, '0.1.0', OPERATOR_NAMESPACE, 'submariner');
  } finally {
    await local.close();
    await broker.close();
  }
}

before(
  async () => {
    const [x, y] = await Promise.all([startTestCluster(), startTestCluster()]);
    if ('skip' in x) {
      skip = x.skip;
      return;
    }
    if ('skip' in y) {
      skip = y.skip;
      return;
    }
    a = x;
    b = y;
    tmp = mkdtempSync(join(tmpdir(), 'strait-cli-k8s-'));
    kubeconfig = join(tmp, 'two.kubeconfig');
    writeFileSync(kubeconfig, twoContexts(a, b, await freeTcpPort()), { mode: 0o600 });
    // A has strait's CRDs; B not yet (the first tests are about that)
    installCrds(a);
  },
  { timeout: 3_600_000 },
);

after(async () => {
  for (const g of agents) await g.stop();
  for (const s of stores) await s.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  await Promise.all([a?.stop(), b?.stop()]);
});

describe('strait in Kubernetes mode: --kubeconfig/--context for deploy-broker, join, show, export, verify, diagnose', () => {
  test('--kubeconfig/--context are one definition: the same help line on every command that takes them', async (t) => {
    if (!a) return t.skip(skip);
    const lines = new Map<string, string[]>();
    for (const cmd of [
      ['deploy-broker'],
      ['join'],
      ['show', 'connections'],
      ['show', 'exports'],
      ['export', 'service'],
      ['unexport', 'service'],
      ['verify'],
      ['diagnose'],
      ['get'],
    ]) {
      // the help text wraps at a width that depends on the command's other options: compare it unwrapped
      const h = (await ok(strait([...cmd, '--help']))).replace(/\s+/g, ' ');
      lines.set(cmd.join(' '), [/--kubeconfig <file> .*?(?= --context)/.exec(h)?.[0] ?? '', /--context <name> .*?\)/.exec(h)?.[0] ?? '']);
    }
    const first = [...lines.values()][0]!;
    assert.match(first[0]!, /^--kubeconfig <file> Kubernetes mode: act on the cluster of this kubeconfig instead of the local world/);
    assert.match(first[1]!, /^--context <name> Kubernetes mode: the kubeconfig context to use/);
    for (const [cmd, l] of lines) assert.deepEqual(l, first, cmd);
  });

  test('a missing or unreadable kubeconfig, an unknown context, a dead API server: clear errors with stable codes, nothing written', {
    // about twenty CLI runs: 8 s each at load 20 (a ceiling, not a measure)
    timeout: 240_000,
  }, async (t) => {
    if (!a) return t.skip(skip);
    const bad = join(tmp, 'bad.kubeconfig');
    writeFileSync(bad, 'apiVersion: v1\nkind: Config\nclusters: [ {name: x\n');
    const cases: [string, string[], number, RegExp][] = [
      [
        'missing file',
        ['show', 'connections', '--kubeconfig', join(tmp, 'nope.kubeconfig')],
        2,
        /STRAIT_ERR_KUBE_CONFIG: kubeconfig ".*nope\.kubeconfig" is not usable: the file does not exist/,
      ],
      ['not YAML', ['export', 'service', 'echo', '--kubeconfig', bad], 2, /STRAIT_ERR_KUBE_CONFIG: kubeconfig ".*bad\.kubeconfig" is not usable/],
      [
        'unknown context',
        ['show', 'gateways', '--kubeconfig', kubeconfig, '--context', 'c'],
        2,
        /STRAIT_ERR_KUBE_CONFIG: .*no context "c" \(contexts: a, b, dead\)/,
      ],
      ['unknown context (deploy-broker)', ['deploy-broker', '--kubeconfig', kubeconfig, '--context', 'c'], 2, /STRAIT_ERR_KUBE_CONFIG: .*no context "c"/],
      [
        'unknown context (join)',
        ['join', 'x.subm', '--clusterid', 'c', '--clustercidr', '10.9.0.0/16', '--servicecidr', '10.8.0.0/16', '--kubeconfig', kubeconfig, '--context', 'c'],
        2,
        /STRAIT_ERR_KUBE_CONFIG: .*no context "c"/,
      ],
      ['unknown context (verify)', ['verify', '--kubeconfig', kubeconfig, '--context', 'c'], 2, /STRAIT_ERR_KUBE_CONFIG: .*no context "c"/],
      ['unknown context (diagnose)', ['diagnose', '--kubeconfig', kubeconfig, '--context', 'c'], 2, /STRAIT_ERR_KUBE_CONFIG: .*no context "c"/],
      [
        'dead API server',
        ['show', 'connections', '--kubeconfig', kubeconfig, '--context', 'dead'],
        5,
        /STRAIT_ERR_STORE_UNAVAILABLE: .*ECONNREFUSED.*is the Kubernetes API server up, and are --kubeconfig and --context the right ones\?/,
      ],
      [
        '--cluster with a kubeconfig',
        ['show', 'connections', '--cluster', 'cluster-b', '--kubeconfig', kubeconfig],
        2,
        /STRAIT_ERR_USAGE: --cluster names the local world/,
      ],
      ['--context alone reads $KUBECONFIG: none here', ['show', 'connections', '--context', 'a'], 2, /STRAIT_ERR_KUBE_CONFIG/],
    ];
    const wrong: string[] = [];
    for (const [name, args, status, re] of cases) {
      const r = await strait(args, { KUBECONFIG: join(tmp, 'absent.kubeconfig'), HOME: tmp });
      if (r.status !== status || !re.test(r.stderr)) wrong.push(`${name}: exit ${r.status}, stderr ${r.stderr.trim()}`);
    }
    assert.deepEqual(wrong, []);
    // deploy-broker wrote no broker-info file
    assert.throws(() => readFileSync(join(tmp, 'broker-info.subm')));
  });

  test('before the CRDs are applied: deploy-broker, join, show, export, get say what to apply (STRAIT_ERR_KUBE_CRD_MISSING, exit 3) and write nothing', {
    timeout: 120_000,
  }, async (t) => {
    if (!a || !b) return t.skip(skip);
    const crds =
      /STRAIT_ERR_KUBE_CRD_MISSING: the Kubernetes API server ".*" does not serve .*strait's CustomResourceDefinitions are not installed there; apply them first: kubectl apply -f deploy\/crds\.yaml/;
    const dep = await on('b', ['deploy-broker', '--file', 'b.subm']);
    assert.equal(dep.status, 3, dep.stderr);
    assert.match(dep.stderr, crds);
    assert.match(
      dep.stderr,
      /"clusters\.submariner\.io", "endpoints\.submariner\.io", "gateways\.submariner\.io", "serviceimports\.multicluster\.x-k8s\.io", "brokers\.submariner\.io"/,
    );
    // the broker on A (which has the CRDs), then B's join: refused before anything is written on either side.
    // (The broker namespace is made first: deploy-broker's own namespace write can still race its
    // ServiceAccount write on a loaded machine, "serviceaccounts ... not found"; that is fixed apart.)
    await kubeOk(a, ['create', 'namespace', 'submariner-k8s-broker']);
    await ok(on('a', ['deploy-broker', '--cluster', 'cluster-a', '--file', 'broker-info.subm']));
    info = parseBrokerInfo(readFileSync(join(tmp, 'broker-info.subm'), 'utf8'), 'broker-info.subm');
    // the Broker object as Submariner's deploy-broker writes it (subctl show brokers lists it)
    const brokerObj = JSON.parse(await kubeOk(a, ['get', 'brokers.submariner.io', 'submariner-broker', '-n', 'submariner-k8s-broker', '-o', 'json'])) as {
      apiVersion: string;
      spec: unknown;
    };
    assert.equal(brokerObj.apiVersion, 'submariner.io/v1alpha1');
    assert.deepEqual(brokerObj.spec, { components: ['service-discovery', 'connectivity'], globalnetEnabled: false });
    const j = await on('b', ['join', 'broker-info.subm', '--clusterid', 'cluster-b', '--clustercidr', '10.20.0.0/16', '--servicecidr', '10.21.0.0/16']);
    assert.equal(j.status, 3, j.stderr);
    assert.match(j.stderr, crds);
    assert.match(j.stderr, /"submariners\.submariner\.io"/);
    assert.doesNotMatch(j.stderr, /404|not found/i);
    assert.equal(
      (await kubeOk(a, ['get', 'clusters.submariner.io', '-n', 'submariner-k8s-broker', '-o', 'name'])).trim(),
      '',
      'no Cluster record on the broker',
    );
    assert.notEqual((await b.kubectlAsync(['get', 'namespace', OPERATOR_NAMESPACE])).status, 0, 'nothing written in B');
    for (const args of [
      ['show', 'connections'],
      ['export', 'service', 'echo'],
      ['unexport', 'service', 'echo'],
      ['get', 'serviceexports', '-A'],
    ]) {
      const r = await on('b', args);
      assert.equal(r.status, 3, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /STRAIT_ERR_KUBE_CRD_MISSING: .*serviceexports\.multicluster\.x-k8s\.io.*kubectl apply -f deploy\/crds\.yaml/, args.join(' '));
    }
    // verify and diagnose report it as their first (failing) check
    const v = await on('b', ['verify']);
    assert.equal(v.status, 1, v.stderr);
    assert.match(v.stdout, /setup\s+crds\s+.*FAIL\s+-\s+.*kubectl apply -f deploy\/crds\.yaml/);
    const d = await on('b', ['diagnose', '-o', 'json']);
    assert.equal(d.status, 1, d.stderr);
    assert.deepEqual(
      (JSON.parse(d.stdout) as { checks: { check: string; status: string }[] }).checks.map((c) => `${c.check} ${c.status}`),
      ['crds fail'],
    );
    assert.match(d.stderr, /STRAIT_ERR_MC_DIAGNOSE_FAILED/);
    installCrds(b);
  });

  test("join both clusters with one kubeconfig; the gateways' records: show connections/gateways/endpoints/clusters per context, RTT included", {
    timeout: 120_000,
  }, async (t) => {
    if (!a || !b) return t.skip(skip);
    await ok(on('a', ['join', 'broker-info.subm', '--clusterid', 'cluster-a', '--clustercidr', '10.10.0.0/16', '--servicecidr', '10.11.0.0/16']));
    await ok(on('b', ['join', 'broker-info.subm', '--clusterid', 'cluster-b', '--clustercidr', '10.20.0.0/16', '--servicecidr', '10.21.0.0/16']));
    // as each gateway does: its records in its cluster, its Endpoint on the broker, the other's copied back (twice: the first round puts both on the broker)
    for (let i = 0; i < 2; i++) {
      await publish(a, records('cluster-a', 'connected', '1.234ms'));
      await publish(b, records('cluster-b', 'connected', '987µs'));
    }
    const header = (cols: readonly string[]) => new RegExp(`^${cols.map((c) => c.replace(/[.]/g, '\\.')).join('\\s+')}$`, 'm');
    const connA = await ok(on('a', ['show', 'connections']));
    assert.match(connA, /^Cluster "cluster-a"$/m);
    assert.match(connA, header(COLUMNS.connections));
    assert.match(connA, /^b-gw\s+cluster-b\s+172\.30\.2\.2\s+no\s+strait-psk\s+10\.20\.0\.0\/16, 10\.21\.0\.0\/16\s+connected\s+1\.234ms$/m);
    const connB = await ok(on('b', ['show', 'connections']));
    assert.match(connB, /^a-gw\s+cluster-a\s+172\.30\.1\.2\s+no\s+strait-psk\s+10\.10\.0\.0\/16, 10\.11\.0\.0\/16\s+connected\s+987µs$/m);
    // the kubeconfig's current-context ("a") without --context; --context alone finds $KUBECONFIG
    assert.match(await ok(strait(['show', 'gateways', '--kubeconfig', kubeconfig])), /^a-gw\s+active\s+All connections \(1\) are established$/m);
    assert.match(
      await ok(strait(['show', 'gateways', '--context', 'b'], { KUBECONFIG: kubeconfig })),
      /^b-gw\s+active\s+All connections \(1\) are established$/m,
    );
    const gwB = await ok(on('b', ['show', 'gateways']));
    assert.match(gwB, header(COLUMNS.gateways));
    assert.doesNotMatch(gwB, /a-gw/);
    const ep = await ok(on('a', ['show', 'endpoints']));
    assert.match(ep, header(COLUMNS.endpoints));
    assert.match(ep, /^cluster-a\s+172\.30\.1\.2\s+172\.30\.1\.2\s+strait-psk\s+local$/m);
    assert.match(ep, /^cluster-b\s+172\.30\.2\.2\s+172\.30\.2\.2\s+strait-psk\s+remote$/m);
    const cl = await ok(on('b', ['show', 'clusters']));
    assert.match(cl, header(COLUMNS.clusters));
    assert.match(cl, /^cluster-a\s+strait\s+10\.11\.0\.0\/16\s+10\.10\.0\.0\/16\s+connected$/m);
    assert.match(cl, /^cluster-b\s+strait\s+10\.21\.0\.0\/16\s+10\.20\.0\.0\/16\s+local$/m);
    const all = JSON.parse(await ok(on('a', ['show', 'all', '-o', 'json']))) as Record<string, unknown>;
    assert.deepEqual(Object.keys(all).sort(), ['brokers', 'cluster', 'connections', 'endpoints', 'gateways', 'networks', 'versions']);
    assert.equal((all['brokers'] as { namespace: string }[])[0]?.namespace, 'submariner-k8s-broker', "the broker read with the join's token");
    assert.deepEqual(
      (all['brokers'] as { name: string; components: string[] }[]).map((x) => [x.name, x.components]),
      [['submariner-broker', ['service-discovery', 'connectivity']]],
    );
    for (const e of all['endpoints'] as { endpointIP: string; publicIP: string }[])
      assert.ok(e.endpointIP !== '0.0.0.0' && e.publicIP !== '0.0.0.0', JSON.stringify(e));
    const pkgVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    assert.deepEqual(
      (all['versions'] as { component: string; configured: string }[]).map((v) => [v.component, v.configured]),
      [
        ['strait-gateway', pkgVersion],
        ['strait-node-agent', pkgVersion],
        ['strait-control', pkgVersion],
      ],
    );
    assert.deepEqual((all['networks'] as { clusterCIDRs: string[] }).clusterCIDRs, ['10.10.0.0/16']);
    assert.equal(
      (all['versions'] as { component: string; running: string }[]).find((v) => v.component === 'strait-gateway')?.running,
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version,
      "the gateway publishes package.json's version",
    );
  });

  test("export service in B creates the MCS ServiceExport; synced (Valid=True) it shows in B's exports and A's imports; verify and diagnose pass; unexport deletes it", {
    timeout: 180_000,
  }, async (t) => {
    if (!a || !b) return t.skip(skip);
    const bx = b;
    await kubeOk(bx, ['create', 'service', 'clusterip', 'echo', '--tcp=8080:8080', '-n', 'default']);
    const missing = await on('b', ['export', 'service', 'nope', '-n', 'default']);
    assert.equal(missing.status, 3, missing.stderr);
    assert.match(missing.stderr, /STRAIT_ERR_NOT_FOUND: Service "nope" not found in namespace "default"/);
    assert.match(await ok(on('b', ['export', 'service', 'echo', '-n', 'default'])), /Service default\/echo exported successfully from cluster-b/);
    // served as v1alpha1 (what strait writes) and v1beta1 (kubectl's preferred version, upstream's storage one)
    for (const v of ['v1alpha1', 'v1beta1']) {
      const se = JSON.parse(await kubeOk(bx, ['get', `serviceexports.${v}.multicluster.x-k8s.io`, 'echo', '-n', 'default', '-o', 'json'])) as {
        apiVersion: string;
      };
      assert.equal(se.apiVersion, `multicluster.x-k8s.io/${v}`);
    }
    assert.match(await ok(on('a', ['show', 'exports'])), /No service exports found/);
    // the control module's export/import sync in each cluster, reaching the broker with the join's token
    for (const [c, id] of [
      [a, 'cluster-a'],
      [bx, 'cluster-b'],
    ] as const) {
      const local: KubernetesResourceStore = openKubernetesStore({ kubeconfig: c.kubeconfig });
      const broker = openBrokerByUrl(info.brokerURL, info.clientToken, info.brokerCA);
      stores.push(local, broker);
      const agent = new MulticlusterAgent({ clusterId: id, local, broker, resyncMs: 1000 });
      agents.push(agent);
      agent.start();
    }
    const exports = await waitFor(
      async () => {
        const out = await ok(on('b', ['show', 'exports']));
        return /^default\s+echo\s+True\s/m.test(out) ? out : undefined;
      },
      60_000,
      'ServiceExport Valid=True',
    );
    assert.match(exports, new RegExp(`^${COLUMNS.exports.join('\\s+')}$`, 'm'));
    assert.match(exports, /^default\s+echo\s+True\s+ServiceExported\s+Service was successfully synced to the broker$/m);
    const imports = await waitFor(
      async () => {
        const out = await ok(on('a', ['show', 'imports']));
        // the import shows at once; its clusterset IP once the derived Service has one (docs/multicluster.md)
        return /^default\s+echo\s+ClusterSetIP\s+\d+\.\d+\.\d+\.\d+\s/m.test(out) ? out : undefined;
      },
      60_000,
      'ServiceImport in A with its clusterset IP',
    );
    assert.match(imports, /^default\s+echo\s+ClusterSetIP\s+\d+\.\d+\.\d+\.\d+\s+8080\/TCP\s+cluster-b$/m);

    const v = await on('a', ['verify', '-o', 'json']);
    assert.equal(v.status, 0, v.stdout + v.stderr);
    const rows = (JSON.parse(v.stdout) as { checks: { check: string; name: string; to: string; result: string; detail: string }[] }).checks;
    const row = (name: string) => rows.filter((r) => r.name === name).map((r) => `${r.result} ${r.to}: ${r.detail}`);
    assert.match(row('crds').join(), /^PASS/);
    assert.match(row('joined').join(), /^PASS .*cluster cluster-a joined/);
    assert.match(row('broker').join(), /^PASS .*clusters cluster-a, cluster-b/);
    assert.match(row('gateway active').join(), /^PASS a-gw: gateway a-gw is active/);
    assert.deepEqual(row('gateway connection'), ['PASS cluster-b: a-gw -> 172.30.2.2 (strait-psk): connected, RTT 1.23 ms']);
    assert.deepEqual(
      rows.filter((r) => r.result === 'SKIP').map((r) => `${r.check} ${r.name}`),
      ['connectivity pod traffic', 'service-discovery export, dig and curl a test service'],
    );
    for (const r of rows.filter((x) => x.result === 'SKIP')) assert.match(r.detail, /^local world only: /);
    const vb = await ok(on('b', ['verify']));
    assert.match(vb, /^service-discovery\s+service export\s+cluster-b\s+default\/echo\s+PASS\s+-\s+Valid=True \(ServiceExported\)/m);
    assert.match(vb, /^\d+ of \d+ checks passed, 2 skipped$/m);
    const d = JSON.parse(await ok(on('b', ['diagnose', '-o', 'json']))) as { checks: { check: string; status: string; message: string }[] };
    // 'skip': strait's pods are not deployed on this bare API server (the workloads check does not apply)
    assert.deepEqual(
      d.checks.filter((c) => c.status !== 'ok' && c.status !== 'skip'),
      [],
    );
    assert.deepEqual(
      d.checks.filter((c) => c.status === 'skip').map((c) => c.message),
      ["no pods in strait-system: strait's components are not deployed here (kubectl apply -k deploy/)"],
    );
    assert.ok(d.checks.some((c) => c.check === 'crds') && d.checks.some((c) => c.check === 'gateway' && /b-gw is active/.test(c.message)));

    await ok(on('b', ['unexport', 'service', 'echo', '-n', 'default']));
    assert.notEqual((await bx.kubectlAsync(['get', 'serviceexports.multicluster.x-k8s.io', 'echo', '-n', 'default'])).status, 0, 'ServiceExport deleted');
    const again = await on('b', ['unexport', 'service', 'echo', '-n', 'default']);
    assert.equal(again.status, 3, again.stderr);
    assert.match(again.stderr, /STRAIT_ERR_NOT_FOUND: ServiceExport "echo" not found/);
  });

  test("verify fails (exit 1) when the active gateway's connection is down, naming it; diagnose too", { timeout: 60_000 }, async (t) => {
    if (!a) return t.skip(skip);
    await publish(a, records('cluster-a', 'connecting', ''));
    const v = await on('a', ['verify', '--only', 'connectivity']);
    assert.equal(v.status, 1, v.stdout);
    assert.match(v.stdout, /^connectivity\s+gateway connection\s+cluster-a\s+cluster-b\s+FAIL\s+-\s+a-gw -> 172\.30\.2\.2 \(strait-psk\): connecting$/m);
    assert.doesNotMatch(v.stdout, /service export/);
    assert.match(v.stderr, /STRAIT_ERR_MC_VERIFY_FAILED: verify: 1 check\(s\) failed: connectivity gateway connection \(cluster-a -> cluster-b\)/);
    const d = await on('a', ['diagnose']);
    assert.equal(d.status, 1, d.stdout);
    assert.match(d.stdout, /connection\s+fail\s+gateway a-gw: connection to cluster-b is connecting/);
    assert.match(await ok(on('a', ['show', 'connections'])), /^b-gw\s+cluster-b\s+.*\s+connecting\s+<none>$/m);
    // K.Gateway is where verify read it
    const gw = openKubernetesStore({ kubeconfig: a.kubeconfig });
    try {
      assert.equal(
        ((await gw.get(K.Gateway, 'a-gw', OPERATOR_NAMESPACE))?.status as { connections: { status: string }[] }).connections[0]?.status,
        'connecting',
      );
    } finally {
      await gw.close();
    }
  });

  test("diagnose --kubeconfig names why strait's pods do not run: an unbound PersistentVolumeClaim (githost), a container in CrashLoopBackOff, restarts", {
    timeout: 60_000,
  }, async (t) => {
    if (!b) return t.skip(skip);
    const bx = b;
    const NS = 'strait-system';
    await bx.kubectlAsync(['create', 'namespace', NS]);
    const githost = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'strait-githost-0', namespace: NS },
      spec: { containers: [{ name: 'githost', image: 'strait' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'strait-githost-data' } }] },
    };
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'strait-githost-data', namespace: NS },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
    const gateway = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'strait-gateway-x', namespace: NS },
      spec: { containers: [{ name: 'gateway', image: 'strait' }] },
    };
    try {
      await kubeOk(bx, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [githost, claim, gateway] }));
      // what a kubelet would report for a gateway that keeps crashing (nothing runs pods here)
      await kubeOk(bx, [
        'patch',
        'pod',
        'strait-gateway-x',
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            phase: 'Running',
            containerStatuses: [
              {
                name: 'gateway',
                ready: false,
                restartCount: 4,
                image: 'strait',
                imageID: '',
                state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
              },
            ],
          },
        }),
      ]);
      const r = await on('b', ['diagnose', '-o', 'json']);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /STRAIT_ERR_MC_DIAGNOSE_FAILED/);
      const w = (JSON.parse(r.stdout) as { checks: { check: string; status: string; message: string }[] }).checks.filter((c) => c.check === 'workloads');
      assert.deepEqual(
        w.map((c) => c.status),
        ['fail', 'fail'],
        JSON.stringify(w),
      );
      assert.match(w[0]!.message, /^pod strait-system\/strait-gateway-x: container gateway is CrashLoopBackOff: back-off 40s restarting failed container$/);
      assert.match(
        w[1]!.message,
        /^pod strait-system\/strait-githost-0 is Pending: its PersistentVolumeClaim strait-githost-data is not bound \(Pending; storage class none: the cluster has no default StorageClass\): nothing provisions a volume for it\. .*an emptyDir \(Helm: githost\.persistence\.enabled=false\) \(kubectl -n strait-system describe pvc strait-githost-data\)$/,
      );
      // the claim removed: the pod names the missing claim; the text output says the same
      await kubeOk(bx, ['delete', 'pvc', 'strait-githost-data', '-n', NS, '--wait=false']);
      await kubeOk(bx, ['patch', 'pvc', 'strait-githost-data', '-n', NS, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']).catch(
        () => '',
      );
      const text = await on('b', ['diagnose']);
      assert.equal(text.status, 1);
      assert.match(
        text.stdout,
        /^workloads\s+fail\s+pod strait-system\/strait-githost-0 is Pending: its PersistentVolumeClaim strait-githost-data does not exist$/m,
      );
    } finally {
      await bx.kubectlAsync(['delete', 'namespace', NS, '--wait=false']);
    }
  });
});
