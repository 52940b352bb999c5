// Submariner's own CRDs (test/fixtures/submariner-crds: Endpoint, Gateway, Cluster and the
// operator's Submariner and Broker) on a real kube-apiserver take the records strait writes:
// the broker's Broker object, the join's Cluster and Submariner resource, and the Endpoint and Gateway records as the gateway
// publishes them in Kubernetes mode (Submariner's shape, in the operator namespace), with a
// strict server-side dry run (kubectl --dry-run=server --validate=strict: unknown fields and
// missing required ones are errors). The same join and publisher then write them for real
// through strait's Kubernetes store (a Gateway is created with its status, which
// Submariner's CRD requires, and marked passive without a status subresource), and
// kubectl reads them back. strait's health of the data path (a connection's reason and loss,
// the active gateway's VXLAN legs: STRAIT_HEALTH_FIELDS) is the only thing Submariner's CRDs
// do not know: a strict dry run names exactly those fields, an ordinary write drops them and
// keeps the reason as statusMessage's prefix. Then `strait crds` replaces Submariner's CRDs
// and takes the same objects with those fields, and objects as Submariner's own components
// write them (dual-stack), strictly too; a Gateway record with a broken leg and a connection
// in error survives the API server, and `strait show connections` and `strait diagnose
// --kubeconfig` show both.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import {
  BROKER_NAMESPACE,
  deployBroker,
  joinCluster,
  markGatewayPassive,
  MC_KINDS as K,
  OPERATOR_NAMESPACE,
  publishGatewayRecords,
  readEndpoint,
  STRAIT_HEALTH_FIELDS,
  readGateway,
  type BrokerInfo,
  type GatewayRecords,
} from '../../src/multicluster/control/clusterset/index.js';
import { openKubernetesStore, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { newTestStore } from '../support/stores.js';
import { startTestCluster, type TestCluster } from '../k8s/cluster.js';

const root = process.env['STRAIT_ROOT'] ?? process.cwd();
const fixtures = join(root, 'test', 'fixtures', 'submariner-crds');
const NS = OPERATOR_NAMESPACE;
const VERSION = '0.1.0';
let cluster: TestCluster | undefined;
let skip: string | undefined;

before(
  async () => {
    const r = await startTestCluster();
    if ('skip' in r) {
      skip = r.skip;
      return;
    }
    cluster = r;
  },
  { timeout: 3_600_000 },
);

after(async () => {
  await cluster?.stop();
});

const network = (clusterId: string, n: number) => ({
  clusterId,
  networkPlugin: 'generic',
  clusterCIDRs: [`10.${n}.0.0/16`],
  serviceCIDRs: [`100.${n}.0.0/16`],
});

/** a gateway's /records (what the data plane reports), for gateway `node` of `clusterId` */
function recs(clusterId: string, n: number, node: string, haStatus: 'active' | 'passive', peer?: string): GatewayRecords {
  return {
    endpoint: {
      clusterId,
      hostname: node,
      endpointIP: `172.16.${n}.1`,
      publicIP: `198.51.100.${n}`,
      cableDriver: 'strait-psk',
      subnets: [`10.${n}.0.0/16`, `100.${n}.0.0/16`],
    },
    gateway: {
      node,
      haStatus,
      summary: haStatus === 'active' ? 'All connections (1) are established' : 'There are no connections',
      ...(haStatus === 'active' ? { nodeLegs: [{ address: `172.16.${n}.2`, status: 'ok' as const, message: '' }] } : {}),
    },
    connections:
      haStatus === 'active' && peer
        ? [
            {
              gateway: node,
              cluster: peer,
              remoteIP: '172.16.2.1',
              nat: 'no',
              cableDriver: 'strait-psk',
              subnets: ['10.2.0.0/16', '100.2.0.0/16'],
              status: 'connected',
              statusMessage: '',
              rttAvg: '412µs',
              rttAvgMs: 0.412,
              loss: '0%',
              txBytes: 1200,
              rxBytes: 3400,
              txPackets: 3,
              rxPackets: 4,
              handshakes: 1,
              rekeys: 0,
            },
          ]
        : [],
  };
}

/**
 * Cluster-a joined and published: its gateway gw-a1 active with a connection to cluster-b
 * (whose Endpoint came from the broker), gw-a2 passive, and a third gateway marked passive
 * by the one that took its lease. `local` is cluster-a's store.
 */
async function writeRecords(local: ResourceStore, broker: ResourceStore, info: BrokerInfo): Promise<void> {
  const b = newTestStore();
  try {
    await joinCluster({ broker, local: b, info, source: 'broker-info.subm', network: network('cluster-b', 2) });
    await joinCluster({ broker, local, info, source: 'broker-info.subm', network: network('cluster-a', 1) });
    await publishGatewayRecords(b, broker, recs('cluster-b', 2, 'gw-b1', 'active', 'cluster-a'), VERSION, NS, 'submariner');
    await publishGatewayRecords(local, broker, recs('cluster-a', 1, 'gw-a3', 'active', 'cluster-b'), VERSION, NS, 'submariner');
    assert.equal(await markGatewayPassive(local, { node: 'gw-a3', clusterId: 'cluster-a', summary: 'Lost the lease to gw-a1 (expired): not reachable' }), true);
    await publishGatewayRecords(local, broker, recs('cluster-a', 1, 'gw-a2', 'passive'), VERSION, NS, 'submariner');
    // twice: the first tick copies cluster-b's Endpoint from the broker, the second names its gateway
    for (let i = 0; i < 2; i++) await publishGatewayRecords(local, broker, recs('cluster-a', 1, 'gw-a1', 'active', 'cluster-b'), VERSION, NS, 'submariner');
  } finally {
    await b.close();
  }
}

/** The submariner.io objects in `local`'s operator namespace, as they would be sent: no server-owned metadata. */
async function submarinerObjects(local: ResourceStore): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const kind of [K.Cluster, K.Endpoint, K.Gateway, K.Submariner]) {
    for (const o of (await local.list(kind, { namespace: NS })).items) {
      out.push({ ...o, metadata: { name: o.metadata.name, namespace: NS, ...(o.metadata.annotations ? { annotations: o.metadata.annotations } : {}) } });
    }
  }
  return out;
}

let objects: KubeObject[] = [];
/** the broker's Broker object, as deploy-broker writes it (in the broker's namespace) */
let brokerObjects: KubeObject[] = [];

function kubectl(args: string[], input?: string): { status: number; stdout: string; stderr: string } {
  return cluster!.kubectl(args, input);
}

function installCrds(docs: KubeObject[]): void {
  const r = kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }));
  assert.equal(r.status, 0, r.stderr);
  for (const d of docs) {
    const w = kubectl(['wait', '--for', 'condition=Established', '--timeout', '60s', `crd/${d.metadata.name}`]);
    assert.equal(w.status, 0, w.stderr);
  }
}

const upstreamCrds = (): KubeObject[] =>
  readdirSync(fixtures)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parse(readFileSync(join(fixtures, f), 'utf8')) as KubeObject);

const straitCrds = (): KubeObject[] => {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'crds'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJSON() as KubeObject)
    .filter((o) => o && o.metadata.name.endsWith(`.${K.Gateway.apiVersion.split('/')[0]}`));
};

/**
 * Server-side dry run of each object (strict: unknown fields are errors; warn: the API
 * server's default, it drops them): create (spec, and status where the CRD has no status
 * subresource); where it has one (Submariner), the status through the subresource of the
 * stored object. What the API server would store must be what was sent, less `dropped`'s
 * fields. Returns the failures, one line each.
 */
function dryRun(objs: KubeObject[], validate: 'strict' | 'warn' = 'strict', dropped: (o: KubeObject) => KubeObject = (o) => o): string[] {
  const wrong: string[] = [];
  for (const o of objs) {
    const what = `${o.kind} ${o.metadata.name}`;
    const c = kubectl(['create', '--dry-run=server', `--validate=${validate}`, '-o', 'json', '-f', '-'], JSON.stringify(o));
    if (c.status !== 0) {
      wrong.push(`${what}: ${c.stderr.trim()}`);
      continue;
    }
    if (o.kind !== 'Submariner') {
      const stored = JSON.parse(c.stdout) as KubeObject;
      const want = dropped(o);
      for (const part of ['spec', 'status'] as const) {
        if (JSON.stringify(sorted(stored[part])) !== JSON.stringify(sorted(want[part])))
          wrong.push(`${what}: ${part} changed by the API server: ${JSON.stringify(stored[part])}`);
      }
      continue;
    }
    kubectl(['delete', 'submariner', o.metadata.name, '-n', NS, '--ignore-not-found']);
    const real = kubectl(['create', '-f', '-'], JSON.stringify({ ...o, status: undefined }));
    if (real.status !== 0) {
      wrong.push(`${what}: ${real.stderr.trim()}`);
      continue;
    }
    const s = kubectl(['replace', '--subresource', 'status', '--dry-run=server', `--validate=${validate}`, '-f', '-'], JSON.stringify(o));
    if (s.status !== 0) wrong.push(`${what} status: ${s.stderr.trim()}`);
    kubectl(['delete', 'submariner', o.metadata.name, '-n', NS]);
  }
  return wrong;
}
const strictDryRun = (objs: KubeObject[]): string[] => dryRun(objs, 'strict');

/** A Gateway's status (or a Submariner's gateways' statuses) without strait's health fields, as Submariner's CRDs store it. */
function withoutStraitHealth(o: KubeObject): KubeObject {
  const strip = (st: Record<string, unknown>): Record<string, unknown> => {
    const { nodeLegs: _legs, ...rest } = st;
    const conns = rest['connections'];
    return Array.isArray(conns)
      ? {
          ...rest,
          connections: conns.map((c: Record<string, unknown>) => Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'reason' && k !== 'loss'))),
        }
      : rest;
  };
  if (o.kind !== 'Gateway' || !o.status) return o;
  return { ...o, status: strip(o.status as Record<string, unknown>) };
}

/** The unknown fields a strict dry run named, as field paths with `[]` for an index ("status.connections[].loss"), and any other failure text. */
function unknownFields(failures: string[]): { fields: Set<string>; other: string[] } {
  const fields = new Set<string>();
  const other: string[] = [];
  for (const f of failures) {
    const found = [...f.matchAll(/unknown field "([^"]+)"/g)].map((m) => (m[1] as string).replace(/\[[0-9]+\]/g, '[]'));
    if (found.length === 0) other.push(f);
    for (const x of found) fields.add(x);
  }
  return { fields, other };
}

const sorted = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sorted)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, x]) => [k, sorted(x)]),
        )
      : v;

describe("Submariner's CRDs take strait's records, and strait's CRDs take the same", { timeout: 300_000 }, () => {
  test("with Submariner's CRDs installed, the records strait writes pass a strict server-side dry run", async (t) => {
    if (!cluster) return t.skip(skip);
    installCrds(upstreamCrds());
    assert.equal(kubectl(['create', 'namespace', NS]).status, 0);
    const broker = newTestStore();
    const local = newTestStore();
    try {
      const info = await deployBroker(broker, { brokerURL: 'https://192.0.2.10:6443', cluster: 'cluster-a' });
      await writeRecords(local, broker, info);
      objects = await submarinerObjects(local);
      brokerObjects = (await broker.list(K.Broker, { namespace: BROKER_NAMESPACE })).items.map((o) => ({
        ...o,
        metadata: { name: o.metadata.name, namespace: BROKER_NAMESPACE },
      }));
    } finally {
      await broker.close();
      await local.close();
    }
    assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
      'Cluster/cluster-a',
      'Endpoint/cluster-a.gw-a1',
      'Endpoint/cluster-b.gw-b1',
      'Gateway/gw-a1',
      'Gateway/gw-a2',
      'Gateway/gw-a3',
      'Submariner/submariner',
    ]);
    // strictly, the only fields Submariner's CRDs do not know are strait's health of the data
    // path (in the Gateway records and, copied, in the Submariner resource's status.gateways)
    const strict = unknownFields(strictDryRun(objects));
    assert.deepEqual(strict.other, []);
    const known = new Set<string>(STRAIT_HEALTH_FIELDS);
    assert.deepEqual(
      [...strict.fields].filter((f) => !known.has(f.replace(/^status\.gateways\[\]\./, 'status.'))),
      [],
      `unknown fields: ${[...strict.fields].join(', ')}`,
    );
    for (const f of ['status.nodeLegs', 'status.connections[].loss', 'status.gateways[].nodeLegs']) assert.ok(strict.fields.has(f), `${f} named`);
    // with the API server's default validation (what strait's Kubernetes store sends: none)
    // they are accepted, and only those fields are dropped
    assert.deepEqual(dryRun(objects, 'warn', withoutStraitHealth), []);
    // the broker's Broker object against Submariner's operator's CRD
    assert.deepEqual(
      brokerObjects.map((o) => `${o.kind}/${o.metadata.name}`),
      ['Broker/submariner-broker'],
    );
    assert.equal(kubectl(['create', 'namespace', BROKER_NAMESPACE]).status, 0);
    assert.deepEqual(strictDryRun(brokerObjects), []);
    // no endpoint address is the unspecified one
    for (const o of objects.filter((x) => x.kind === 'Endpoint')) {
      const s = o.spec as { private_ip: string; public_ip: string };
      assert.ok(s.private_ip !== '0.0.0.0' && s.public_ip !== '0.0.0.0', JSON.stringify(s));
    }
    // the connection's endpoint is the remote gateway's, by its host name
    const gw = objects.find((o) => o.kind === 'Gateway' && o.metadata.name === 'gw-a1')!;
    assert.deepEqual(
      readGateway(gw).connections.map((c) => [c.gateway, c.cluster, c.status]),
      [['gw-b1', 'cluster-b', 'connected']],
    );
    const sub = objects.find((o) => o.kind === 'Submariner')!.status as { gateways: { localEndpoint: { hostname: string }; haStatus: string }[] };
    assert.deepEqual(
      sub.gateways.map((g) => [g.localEndpoint.hostname, g.haStatus]),
      [
        ['gw-a1', 'active'],
        ['gw-a2', 'passive'],
        ['gw-a3', 'passive'],
      ],
    );
  });

  test('the dry run is a real check: the records strait wrote before (summary, byte counters, no nat_enabled) fail it', (t) => {
    if (!cluster || objects.length === 0) return t.skip(skip ?? 'no records');
    const gateway = (name: string): { gw: KubeObject; st: Record<string, unknown>; conn: Record<string, unknown> } => {
      // (without strait's health fields, which Submariner's CRDs do not know either: test 1)
      const gw = withoutStraitHealth(structuredClone(objects.find((o) => o.kind === 'Gateway' && o.metadata.name === 'gw-a1')!));
      gw.metadata.name = name;
      const st = gw.status as Record<string, unknown>;
      return { gw, st, conn: (st['connections'] as Record<string, unknown>[])[0]! };
    };
    // fields Submariner's CRD does not know (a strict decode stops at them) ...
    const unknown = gateway('unknown-fields');
    unknown.st['summary'] = 'All connections (1) are established';
    unknown.conn['bytesIn'] = 3400;
    // ... and fields it requires
    const missing = gateway('missing-fields');
    delete missing.st['statusFailure'];
    delete (missing.conn['endpoint'] as Record<string, unknown>)['nat_enabled'];
    const cl = structuredClone(objects.find((o) => o.kind === 'Cluster')!);
    (cl.spec as Record<string, unknown>)['network_plugin'] = 'generic';
    const wrong = strictDryRun([unknown.gw, missing.gw, cl, { ...unknown.gw, metadata: { name: 'no-status', namespace: NS }, status: undefined }]).join('\n');
    assert.match(wrong, /unknown field "status\.summary"/);
    assert.match(wrong, /unknown field "status\.connections\[0\]\.bytesIn"/);
    assert.match(wrong, /status\.statusFailure: Required value/);
    assert.match(wrong, /status\.connections\[0\]\.endpoint\.nat_enabled: Required value/);
    assert.match(wrong, /unknown field "spec\.network_plugin"/);
    assert.match(wrong, /Gateway no-status: .*status: Required value/);
  });

  test("the join and the gateway's publisher write them for real through the Kubernetes store; kubectl reads them back", async (t) => {
    if (!cluster) return t.skip(skip);
    const broker = newTestStore();
    const kube = openKubernetesStore({ kubeConfigPath: cluster.kubeconfigPath });
    try {
      const info = await deployBroker(broker, { brokerURL: 'https://192.0.2.10:6443', cluster: 'cluster-a' });
      await writeRecords(kube, broker, info);
      const get = (what: string): KubeObject[] => {
        const r = kubectl(['get', what, '-n', NS, '-o', 'json']);
        assert.equal(r.status, 0, r.stderr);
        return (JSON.parse(r.stdout) as { items: KubeObject[] }).items;
      };
      const rows = get('gateways.submariner.io')
        .map((g) => readGateway(g).gateway)
        .map((g) => `${g.node} ${g.haStatus} ${g.summary}`)
        .sort();
      assert.deepEqual(rows, [
        'gw-a1 active All connections (1) are established',
        'gw-a2 passive There are no connections',
        'gw-a3 passive Lost the lease to gw-a1 (expired): not reachable',
      ]);
      const conns = get('gateways.submariner.io')
        .flatMap((g) => readGateway(g).connections)
        .map((c) => `${c.gateway} ${c.cluster} ${c.remoteIP} ${c.status} ${c.rttAvg}`);
      assert.deepEqual(conns, ['gw-b1 cluster-b 172.16.2.1 connected 412µs']);
      // Submariner's CRD dropped strait's health fields on the write (the API server's default validation)
      const a1 = get('gateways.submariner.io').find((g) => g.metadata.name === 'gw-a1')!;
      assert.equal((a1.status as Record<string, unknown>)['nodeLegs'], undefined, JSON.stringify(a1.status));
      const eps = get('endpoints.submariner.io')
        .map((e) => readEndpoint(e, 'cluster-a'))
        .map((e) => `${e.cluster} ${e.hostname} ${e.type}`)
        .sort();
      assert.deepEqual(eps, ['cluster-a gw-a1 local', 'cluster-b gw-b1 remote']);
      const [sub] = get('submariners.submariner.io');
      assert.equal(sub?.metadata.name, 'submariner');
      const spec = sub!.spec as Record<string, unknown>;
      assert.deepEqual(
        [spec['clusterID'], spec['clusterCIDR'], spec['serviceCIDR'], spec['brokerK8sApiServer'], spec['brokerK8sRemoteNamespace']],
        ['cluster-a', '10.1.0.0/16', '100.1.0.0/16', '192.0.2.10:6443', 'submariner-k8s-broker'],
      );
      const status = sub!.status as { clusterID: string; networkPlugin: string; gateways: { localEndpoint: { hostname: string } }[] };
      assert.equal(status.networkPlugin, 'generic');
      assert.deepEqual(
        status.gateways.map((g) => g.localEndpoint.hostname),
        ['gw-a1', 'gw-a2', 'gw-a3'],
      );
    } finally {
      await broker.close();
      await kube.close();
    }
  });

  test("with `strait crds` installed instead, the same objects and those Submariner's components write pass it too", (t) => {
    if (!cluster || objects.length === 0) return t.skip(skip ?? 'no records');
    const r = kubectl(['delete', '-f', fixtures, '--wait=true', '--timeout=60s']);
    assert.equal(r.status, 0, r.stderr);
    installCrds(straitCrds());
    assert.deepEqual(strictDryRun(objects), []);
    assert.deepEqual(strictDryRun(brokerObjects), []);
    // as Submariner writes them: dual-stack lists, every latency field
    const ep = {
      cluster_id: 'cluster-c',
      cable_name: 'submariner-cable-cluster-c-172-18-0-8',
      hostname: 'cluster-c-worker',
      subnets: ['10.3.0.0/16', 'fd00:3::/64'],
      private_ip: '172.18.0.8',
      privateIPs: ['172.18.0.8', 'fc00:f853:ccd:e793::8'],
      public_ip: '66.187.232.132',
      publicIPs: ['66.187.232.132'],
      healthCheckIP: '10.3.0.1',
      healthCheckIPs: ['10.3.0.1'],
      nat_enabled: true,
      backend: 'libreswan',
      backend_config: { preferred_server: 'false' },
    };
    const theirs: KubeObject[] = [
      { apiVersion: K.Endpoint.apiVersion, kind: 'Endpoint', metadata: { name: 'cluster-c-submariner-cable-cluster-c-172-18-0-8', namespace: NS }, spec: ep },
      {
        apiVersion: K.Gateway.apiVersion,
        kind: 'Gateway',
        metadata: { name: 'cluster-c-worker', namespace: NS },
        status: {
          version: 'v0.20.0',
          haStatus: 'active',
          localEndpoint: ep,
          statusFailure: '',
          connections: [
            {
              status: 'connected',
              statusMessage: '',
              endpoint: { ...ep, cluster_id: 'cluster-a' },
              usingIP: '172.18.0.6',
              usingNAT: false,
              latencyRTT: { last: '1.1ms', min: '0.9ms', average: '1ms', max: '1.2ms', stdDev: '0.1ms' },
            },
          ],
        },
      },
    ];
    assert.deepEqual(strictDryRun(theirs), []);
  });

  test("with strait's CRDs, a Gateway record with a broken VXLAN leg and a connection in error survives the API server; show and diagnose --kubeconfig say so", async (t) => {
    if (!cluster || objects.length === 0) return t.skip(skip ?? 'no records');
    // every CRD of `strait crds` (the CLI checks that they are all served)
    const all = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'crds'], { encoding: 'utf8' });
    assert.equal(all.status, 0, all.stderr);
    installCrds(
      parseAllDocuments(all.stdout)
        .map((d) => d.toJSON() as KubeObject)
        .filter(Boolean),
    );
    const kube = openKubernetesStore({ kubeConfigPath: cluster.kubeconfigPath });
    try {
      const r = recs('cluster-a', 1, 'gw-a1', 'active', 'cluster-b');
      r.gateway.summary = '1 connection(s) of 1 are not established';
      r.gateway.nodeLegs = [
        { address: '172.16.1.2', status: 'ok', message: '' },
        { address: '172.16.1.3', status: 'broken', message: 'no VXLAN hello from the node agent at 172.16.1.3 for more than 2 s' },
      ];
      const message =
        'psk-mismatch: a handshake from 172.16.2.1 failed mac1; cluster-b joined with a different broker-info: join both clusters with the same file';
      Object.assign(r.connections[0]!, { status: 'error', reason: 'psk-mismatch', statusMessage: message, loss: '100%' });
      // the gateway's publisher, as in Kubernetes mode (no broker: only this cluster's records)
      await publishGatewayRecords(kube, undefined, r, VERSION, NS, 'submariner');
      const got = kubectl(['get', 'gateways.submariner.io', 'gw-a1', '-n', NS, '-o', 'json']);
      assert.equal(got.status, 0, got.stderr);
      const gw = JSON.parse(got.stdout) as KubeObject;
      const st = gw.status as { nodeLegs?: unknown; connections: Record<string, unknown>[] };
      assert.deepEqual(st.nodeLegs, r.gateway.nodeLegs, 'the legs as written');
      assert.deepEqual(
        [st.connections[0]?.['status'], st.connections[0]?.['reason'], st.connections[0]?.['loss'], st.connections[0]?.['statusMessage']],
        ['error', 'psk-mismatch', '100%', message],
      );
      const row = readGateway(gw);
      assert.deepEqual(
        row.gateway.nodeLegs?.map((l) => `${l.address} ${l.status}`),
        ['172.16.1.2 ok', '172.16.1.3 broken'],
      );
      assert.deepEqual(
        row.connections.map((c) => `${c.cluster} ${c.status} ${c.reason} ${c.loss}`),
        ['cluster-b error psk-mismatch 100%'],
      );
      // the CLI against this API server, which is also the broker of a join made as a user
      // makes it (diagnose reads the broker first; the earlier tests' broker was in memory)
      const cli = (...args: string[]) =>
        spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), ...args, '--kubeconfig', cluster!.kubeconfigPath], { encoding: 'utf8', timeout: 120_000 });
      const dir = mkdtempSync(join(tmpdir(), 'strait-crds-'));
      try {
        const info = join(dir, 'broker-info.subm');
        const dep = cli('deploy-broker', '--file', info);
        assert.equal(dep.status, 0, dep.stdout + dep.stderr);
        const joined = cli('join', info, '--clusterid', 'cluster-a', '--clustercidr', '10.1.0.0/16', '--servicecidr', '100.1.0.0/16');
        assert.equal(joined.status, 0, joined.stdout + joined.stderr);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const show = cli('show', 'connections');
      assert.equal(show.status, 0, show.stderr);
      assert.match(show.stdout, /cluster-b\s.*error: psk-mismatch/, show.stdout);
      const d = cli('diagnose');
      assert.equal(d.status, 1, `diagnose fails: ${d.stdout}${d.stderr}`);
      assert.match(d.stdout, /node-leg\s+fail\s+.*broken VXLAN leg to the node at 172\.16\.1\.3 \(no VXLAN hello from the node agent/, d.stdout);
      assert.match(d.stdout, /node-leg\s+ok\s+.*172\.16\.1\.2/, d.stdout);
      assert.match(d.stdout, /connection\s+fail\s+.*cluster-b is error: psk-mismatch.*join both clusters with the same file/, d.stdout);
      // the leg heals: the next publish says so, and diagnose no longer fails on it
      r.gateway.nodeLegs = [
        { address: '172.16.1.2', status: 'ok', message: '' },
        { address: '172.16.1.3', status: 'ok', message: '' },
      ];
      await publishGatewayRecords(kube, undefined, r, VERSION, NS, 'submariner');
      assert.doesNotMatch(cli('diagnose').stdout, /node-leg\s+fail/);
    } finally {
      await kube.close();
    }
  });

  // Helm's server-side apply of the chart's crds/ over a kubectl install conflicted on
  // brokers.submariner.io's .spec.versions: an empty `properties: {}` that the API server drops
  test("every CRD `strait crds` prints is stored as printed: a second manager's server-side apply of the same file has no conflict", (t) => {
    if (!cluster) return t.skip(skip ?? 'no cluster');
    const r = spawnSync(process.execPath, [join(root, 'bin', 'strait.js'), 'crds'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    for (const manager of ['strait-first', 'strait-second']) {
      const a = kubectl(['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'], r.stdout);
      assert.equal(a.status, 0, `${manager}: ${a.stderr}`);
    }
    const printed = parseAllDocuments(r.stdout)
      .map((d) => d.toJSON() as KubeObject)
      .filter(Boolean);
    for (const crd of printed) {
      const got = JSON.parse(kubectl(['get', 'crd', crd.metadata.name, '-o', 'json']).stdout) as KubeObject;
      const versions = (o: KubeObject): unknown => sorted((o['spec'] as { versions: unknown }).versions);
      assert.deepEqual(versions(got), versions(crd), `${crd.metadata.name}: .spec.versions as printed`);
    }
  });
});
