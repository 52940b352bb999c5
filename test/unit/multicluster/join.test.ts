import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraitError } from '../../../src/base/errors/index.js';
import {
  BROKER_NAMESPACE,
  deployBroker,
  diagnose,
  encodeBrokerInfo,
  joinCluster,
  listJoinedClusters,
  parseBrokerInfo,
  readJoin,
  MC_KINDS as K,
  OPERATOR_NAMESPACE,
  PSK_SECRET,
  type ClusterNetwork,
} from '../../../src/multicluster/control/clusterset/index.js';
import { newTestStore } from '../../support/stores.js';

const net = (clusterId: string, cluster: string, service: string): ClusterNetwork => ({
  clusterId,
  networkPlugin: 'strait',
  clusterCIDRs: [cluster],
  serviceCIDRs: [service],
});

async function setup() {
  const broker = newTestStore();
  const info = await deployBroker(broker, { brokerURL: 'unix:///tmp/s/store.sock#broker', cluster: 'cluster-a' });
  return { broker, info };
}

test('deploy-broker then join records the Cluster on the broker and the PSK in the cluster', async () => {
  const { broker, info } = await setup();
  assert.equal(info.ipsecPSK.length, 48);
  const parsed = parseBrokerInfo(encodeBrokerInfo(info));
  const local = newTestStore();
  const r = await joinCluster({
    broker,
    local,
    info: parsed,
    source: 'b.subm',
    network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16'),
    cableDriver: 'libreswan',
    natt: false,
  });
  assert.deepEqual(r, { clusterId: 'cluster-a', rejoined: false });
  const joined = await listJoinedClusters(broker);
  assert.deepEqual(joined, [net('cluster-a', '10.1.0.0/16', '100.1.0.0/16')]);
  const psk = await local.get(K.Secret, PSK_SECRET, OPERATOR_NAMESPACE);
  assert.equal(Buffer.from((psk?.['data'] as Record<string, string>)['psk']!, 'base64').compare(info.ipsecPSK), 0);
  const j = await readJoin(local);
  assert.equal(j?.cableDriver, 'libreswan');
  assert.equal(j?.natEnabled, false);
  const again = await joinCluster({ broker, local, info: parsed, source: 'b.subm', network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16') });
  assert.equal(again.rejoined, true);
});

test('a join whose CIDR overlaps a joined cluster is refused naming both clusters and both CIDRs', async () => {
  const { broker, info } = await setup();
  await joinCluster({ broker, local: newTestStore(), info, source: 'b.subm', network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16') });
  await assert.rejects(
    joinCluster({ broker, local: newTestStore(), info, source: 'b.subm', network: net('cluster-c', '10.1.128.0/17', '100.3.0.0/16') }),
    (err: unknown) => {
      assert.ok(isStraitError(err, 'STRAIT_ERR_MC_CIDR_OVERLAP'));
      assert.match((err as Error).message, /"cluster-c".*"10\.1\.128\.0\/17".*"10\.1\.0\.0\/16".*"cluster-a"/);
      assert.equal((err as { exitCode: number }).exitCode, 4);
      return true;
    },
  );
  // the service CIDR of one against the cluster CIDR of the other counts too
  await assert.rejects(
    joinCluster({ broker, local: newTestStore(), info, source: 'b.subm', network: net('cluster-d', '10.4.0.0/16', '10.1.2.0/24') }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_CIDR_OVERLAP'),
  );
  assert.deepEqual(
    (await listJoinedClusters(broker)).map((c) => c.clusterId),
    ['cluster-a'],
  );
  // the refusal is recorded on the broker, where the console (and `strait get events -n submariner-k8s-broker`) shows it
  const events = (await broker.list({ apiVersion: 'v1', kind: 'Event' }, { namespace: BROKER_NAMESPACE })).items as unknown as {
    type: string;
    reason: string;
    message: string;
    involvedObject: { kind: string; name: string };
  }[];
  const refusals = events.filter((e) => e.reason === 'CIDROverlap');
  assert.deepEqual(refusals.map((e) => e.involvedObject.name).sort(), ['cluster-c', 'cluster-d']);
  assert.ok(refusals.every((e) => e.type === 'Warning' && e.involvedObject.kind === 'Cluster'));
  assert.match(refusals.find((e) => e.involvedObject.name === 'cluster-c')!.message, /"10\.1\.128\.0\/17".*"10\.1\.0\.0\/16"/);
});

test('join refuses a stale broker-info file after a redeploy, a bad cluster ID, and missing CIDRs', async () => {
  const { broker, info: old } = await setup();
  await deployBroker(broker, { brokerURL: old.brokerURL, cluster: 'cluster-a', token: old.clientToken });
  await assert.rejects(
    joinCluster({ broker, local: newTestStore(), info: old, source: 'old.subm', network: net('cluster-b', '10.2.0.0/16', '100.2.0.0/16') }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_BROKER_INFO_STALE') && /PSK/.test((err as Error).message),
  );
  await assert.rejects(
    joinCluster({ broker, local: newTestStore(), info: old, source: 'x', network: net('Cluster_B', '10.2.0.0/16', '100.2.0.0/16') }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_CLUSTER_ID_INVALID'),
  );
  await assert.rejects(
    joinCluster({ broker, local: newTestStore(), info: old, source: 'x', network: { ...net('cluster-b', '10.2.0.0/16', '100.2.0.0/16'), serviceCIDRs: [] } }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_NETWORK_UNKNOWN'),
  );
  await assert.rejects(
    joinCluster({ broker: newTestStore(), local: newTestStore(), info: old, source: 'x', network: net('cluster-b', '10.2.0.0/16', '100.2.0.0/16') }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_BROKER_NOT_DEPLOYED'),
  );
});

test('diagnose reports overlaps among joined clusters and what blocks a candidate', async () => {
  const { broker, info } = await setup();
  await joinCluster({ broker, local: newTestStore(), info, source: 'b', network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16') });
  // a record that got onto the broker with an overlap (e.g. written by hand)
  await broker.apply({
    apiVersion: K.Cluster.apiVersion,
    kind: 'Cluster',
    metadata: { name: 'rogue', namespace: BROKER_NAMESPACE },
    spec: { cluster_id: 'rogue', cluster_cidr: ['10.1.0.0/24'], service_cidr: ['100.9.0.0/16'] },
  });
  const checks = await diagnose({ broker, candidate: { info, network: net('cluster-z', '100.1.5.0/24', '100.8.0.0/16') } });
  const fails = checks.filter((c) => c.status === 'fail').map((c) => c.message);
  assert.ok(
    fails.some((m) => /10\.1\.0\.0\/16 of cluster cluster-a overlaps CIDR 10\.1\.0\.0\/24 of cluster rogue/.test(m)),
    fails.join('\n'),
  );
  assert.ok(
    fails.some((m) => /cluster-z cannot join: its CIDR 100\.1\.5\.0\/24 overlaps CIDR 100\.1\.0\.0\/16 of cluster cluster-a/.test(m)),
    fails.join('\n'),
  );
  assert.ok(checks.some((c) => c.check === 'broker-info' && c.status === 'ok'));
  const none = await diagnose({ broker: newTestStore() });
  assert.equal(none[0]?.status, 'fail');
  assert.match(none[0]!.message, /deploy-broker/);
});

test('bootstrapClusterSet deploys the broker and joins every cluster (what strait up does)', async () => {
  const { bootstrapClusterSet, parseBrokerInfo: parse } = await import('../../../src/multicluster/control/clusterset/index.js');
  const broker = newTestStore();
  const r = await bootstrapClusterSet({
    broker,
    brokerURL: 'unix:///tmp/s.sock#broker',
    brokerCluster: 'cluster-a',
    clusters: [
      { store: newTestStore(), network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16') },
      { store: newTestStore(), network: net('cluster-b', '10.2.0.0/16', '100.2.0.0/16') },
    ],
  });
  assert.equal(parse(r.brokerInfoText).ipsecPSK.length, 48);
  assert.deepEqual(
    (await listJoinedClusters(broker)).map((c) => c.clusterId),
    ['cluster-a', 'cluster-b'],
  );
});

test('one PSK per cluster set: a deploy on a broker with joined clusters keeps their PSK; --new-psk mints one; a broker without the stored PSK is refused', async () => {
  const { broker, info } = await setup();
  await joinCluster({ broker, local: newTestStore(), info, source: 'b.subm', network: net('cluster-a', '10.1.0.0/16', '100.1.0.0/16') });
  await joinCluster({ broker, local: newTestStore(), info, source: 'b.subm', network: net('cluster-b', '10.2.0.0/16', '100.2.0.0/16') });
  // the newcomer's deploy-broker on a running set: the same PSK, so a re-join of one cluster keeps the set on one PSK
  const again = await deployBroker(broker, { brokerURL: info.brokerURL, cluster: 'cluster-a', token: info.clientToken });
  assert.equal(again.pskKept, true);
  assert.deepEqual(again.joined, ['cluster-a', 'cluster-b']);
  assert.equal(again.ipsecPSK.compare(info.ipsecPSK), 0);
  const local = newTestStore();
  await joinCluster({ broker, local, info: again, source: 'again.subm', network: net('cluster-b', '10.2.0.0/16', '100.2.0.0/16') });
  const written = await local.get(K.Secret, PSK_SECRET, OPERATOR_NAMESPACE);
  assert.equal(Buffer.from((written?.['data'] as Record<string, string>)['psk']!, 'base64').compare(info.ipsecPSK), 0);
  // an explicit rotation: a new PSK, and the clusters that must join again are named
  const rotated = await deployBroker(broker, { brokerURL: info.brokerURL, cluster: 'cluster-a', token: info.clientToken, newPsk: true });
  assert.equal(rotated.pskKept, false);
  assert.notEqual(rotated.ipsecPSK.compare(info.ipsecPSK), 0);
  assert.deepEqual(rotated.joined, ['cluster-a', 'cluster-b']);
  // a broker deployed before the PSK was kept on it (fingerprint only): refused, with both ways out
  await broker.delete(K.Secret, PSK_SECRET, BROKER_NAMESPACE);
  await assert.rejects(
    deployBroker(broker, { brokerURL: info.brokerURL, cluster: 'cluster-a', token: info.clientToken }),
    (err: unknown) =>
      isStraitError(err, 'STRAIT_ERR_MC_BROKER_PSK_UNKNOWN') &&
      /cluster-a, cluster-b/.test((err as Error).message) &&
      /--new-psk/.test((err as Error).message) &&
      /strait join broker-info\.subm --clusterid cluster-b/.test((err as Error).message),
  );
});
