import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  connectedClusters,
  deployBroker,
  joinCluster,
  markGatewayPassive,
  MC_KINDS as K,
  publishGatewayRecords,
  readEndpoint,
  readGateway,
  startRecordsPublisher,
  steadyRecordsKey,
  type GatewayRecords,
} from '../../../src/multicluster/control/clusterset/index.js';
import { newTestStore } from '../../support/stores.js';

const recs = (cluster: string, n: number, status: string): GatewayRecords => ({
  endpoint: {
    clusterId: cluster,
    hostname: `${cluster}-gw`,
    endpointIP: `172.16.${n}.1`,
    publicIP: `198.51.100.${n}`,
    cableDriver: 'strait-psk',
    subnets: [`10.${n}.0.0/16`],
  },
  gateway: { node: `${cluster}-gw`, haStatus: 'active', summary: 'x' },
  connections: [
    {
      gateway: `${cluster}-gw`,
      cluster: cluster === 'cluster-a' ? 'cluster-b' : 'cluster-a',
      remoteIP: '172.16.9.1',
      nat: 'no',
      cableDriver: 'strait-psk',
      subnets: [],
      status,
      rttAvg: '1ms',
    },
  ],
});

test('gateway records land as Endpoint and Gateway objects; remote endpoints are copied from the broker', async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  await publishGatewayRecords(b, broker, recs('cluster-b', 2, 'connected'), '0.1.0');
  await publishGatewayRecords(a, broker, recs('cluster-a', 1, 'connecting'), '0.1.0');
  const eps = (await a.list(K.Endpoint, {})).items.map((e) => readEndpoint(e, 'cluster-a'));
  assert.deepEqual(eps.map((e) => [e.cluster, e.type, e.endpointIP]).sort(), [
    ['cluster-a', 'local', '172.16.1.1'],
    ['cluster-b', 'remote', '172.16.2.1'],
  ]);
  const gws = (await a.list(K.Gateway, {})).items;
  assert.equal(readGateway(gws[0]!).connections[0]!.status, 'connecting');
  assert.deepEqual([...connectedClusters(gws, 'cluster-a')!], ['cluster-a']);
  // the connection comes up: DNS health follows the record
  await publishGatewayRecords(a, broker, recs('cluster-a', 1, 'connected'));
  assert.deepEqual([...connectedClusters((await a.list(K.Gateway, {})).items, 'cluster-a')!].sort(), ['cluster-a', 'cluster-b']);
  assert.equal(connectedClusters([], 'cluster-a'), undefined);
});

test('gateway HA: only the active gateway of a cluster has an Endpoint, here and on the broker; both have a Gateway record', async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  const gw = (node: string, ip: string, haStatus: string): GatewayRecords => ({
    endpoint: {
      clusterId: 'cluster-a',
      hostname: node,
      endpointIP: ip,
      publicIP: `198.51.100.${ip.split('.')[3]}`,
      cableDriver: 'strait-psk',
      subnets: ['10.1.0.0/16'],
    },
    gateway: { node, haStatus, summary: haStatus === 'active' ? 'All connections (1) are established' : 'There are no connections' },
    connections: [],
  });
  const endpointIPs = async (s: typeof a, ns: string) =>
    (await s.list(K.Endpoint, { namespace: ns })).items
      .map((e) => readEndpoint(e, 'cluster-a'))
      .filter((e) => e.cluster === 'cluster-a')
      .map((e) => e.endpointIP)
      .sort();
  await publishGatewayRecords(a, broker, gw('gw-1', '172.16.1.1', 'active'));
  await publishGatewayRecords(a, broker, gw('gw-2', '172.16.1.2', 'passive'));
  assert.deepEqual(await endpointIPs(broker, 'submariner-k8s-broker'), ['172.16.1.1']);
  assert.deepEqual(await endpointIPs(a, 'submariner-operator'), ['172.16.1.1']);
  // gw-1 dies for good; gw-2 takes over: the Endpoint moves, on the broker and in the other cluster
  await publishGatewayRecords(a, broker, gw('gw-2', '172.16.1.2', 'active'));
  assert.deepEqual(await endpointIPs(broker, 'submariner-k8s-broker'), ['172.16.1.2']);
  assert.deepEqual(await endpointIPs(a, 'submariner-operator'), ['172.16.1.2']);
  await publishGatewayRecords(b, broker, recs('cluster-b', 2, 'connected'));
  const seenByB = (await b.list(K.Endpoint, {})).items.map((e) => readEndpoint(e, 'cluster-b')).filter((e) => e.cluster === 'cluster-a');
  assert.deepEqual(
    seenByB.map((e) => [e.endpointIP, e.type]),
    [['172.16.1.2', 'remote']],
  );
  await publishGatewayRecords(a, broker, gw('gw-1', '172.16.1.1', 'passive'));
  const gws = (await a.list(K.Gateway, {})).items
    .map((g) => readGateway(g).gateway)
    .map((g) => `${g.node}:${g.haStatus}`)
    .sort();
  assert.deepEqual(gws, ['gw-1:passive', 'gw-2:active'], 'gw-1 restarted passive');
  assert.deepEqual(await endpointIPs(broker, 'submariner-k8s-broker'), ['172.16.1.2']);
});

test("gateway HA: markGatewayPassive turns the former holder's record passive with a summary and drops its Endpoint; unknown gateways are left alone", async () => {
  const a = newTestStore();
  const rec = (node: string, ip: string, haStatus: string): GatewayRecords => ({
    endpoint: { clusterId: 'cluster-a', hostname: node, endpointIP: ip, publicIP: ip, cableDriver: 'strait-psk', subnets: ['10.1.0.0/16'] },
    gateway: { node, haStatus, summary: 'All connections (1) are established' },
    connections: [
      { gateway: node, cluster: 'cluster-b', remoteIP: '172.16.9.1', nat: 'no', cableDriver: 'strait-psk', subnets: [], status: 'connected', rttAvg: '1ms' },
    ],
  });
  await publishGatewayRecords(a, undefined, rec('gw-1', '172.16.1.1', 'active'));
  assert.equal(await markGatewayPassive(a, { node: 'gw-1', clusterId: 'cluster-a', summary: 'Lost the lease to gw-2 (expired): not reachable' }), true);
  const g = readGateway((await a.get(K.Gateway, 'gw-1', 'submariner-operator'))!);
  assert.deepEqual(g.gateway, { node: 'gw-1', haStatus: 'passive', summary: 'Lost the lease to gw-2 (expired): not reachable' });
  assert.deepEqual(g.connections, []);
  assert.equal(await a.get(K.Endpoint, 'cluster-a.gw-1', 'submariner-operator'), undefined, 'its Endpoint is gone');
  // already passive: kept as it is (a restarted gateway's own words win)
  assert.equal(await markGatewayPassive(a, { node: 'gw-1', clusterId: 'cluster-a', summary: 'other' }), true);
  assert.equal(readGateway((await a.get(K.Gateway, 'gw-1', 'submariner-operator'))!).gateway.summary, 'Lost the lease to gw-2 (expired): not reachable');
  assert.equal(await markGatewayPassive(a, { node: 'gw-9', clusterId: 'cluster-a', summary: 'x' }), false);
});

test("records in Submariner's shape (Kubernetes mode): only the fields its CRDs know, the remote gateway's host name, read back as the same rows", async () => {
  const a = newTestStore();
  const r = recs('cluster-a', 1, 'connected');
  // the remote cluster's Endpoint (copied from the broker) names its gateway
  await a.apply({
    apiVersion: K.Endpoint.apiVersion,
    kind: 'Endpoint',
    metadata: { name: 'cluster-b.gw-b', namespace: 'submariner-operator' },
    spec: {
      cluster_id: 'cluster-b',
      cable_name: 'c',
      hostname: 'gw-b',
      subnets: ['10.2.0.0/16'],
      private_ip: '172.16.9.1',
      public_ip: '172.16.9.1',
      nat_enabled: false,
      backend: 'strait-psk',
    },
  });
  await publishGatewayRecords(a, undefined, r, '0.1.0', 'submariner-operator', 'submariner');
  const ep = (await a.get(K.Endpoint, 'cluster-a.cluster-a-gw', 'submariner-operator'))!;
  assert.deepEqual(Object.keys(ep.spec as object).sort(), [
    'backend',
    'cable_name',
    'cluster_id',
    'hostname',
    'nat_enabled',
    'private_ip',
    'public_ip',
    'subnets',
  ]);
  assert.deepEqual(readEndpoint(ep, 'cluster-a'), {
    cluster: 'cluster-a',
    hostname: 'cluster-a-gw',
    endpointIP: '172.16.1.1',
    publicIP: '198.51.100.1',
    cableDriver: 'strait-psk',
    subnets: ['10.1.0.0/16'],
    type: 'local',
  });
  const gw = (await a.get(K.Gateway, 'cluster-a-gw', 'submariner-operator'))!;
  const st = gw.status as Record<string, unknown>;
  // GatewayStatus: version, haStatus, localEndpoint, statusFailure, connections (all required), nothing else
  assert.deepEqual(Object.keys(st).sort(), ['connections', 'haStatus', 'localEndpoint', 'statusFailure', 'version']);
  assert.equal(st['statusFailure'], '');
  const conn = (st['connections'] as Record<string, unknown>[])[0]!;
  assert.deepEqual(Object.keys(conn).sort(), ['endpoint', 'latencyRTT', 'status', 'statusMessage', 'usingIP', 'usingNAT']);
  assert.deepEqual(Object.keys(conn['endpoint'] as object).sort(), [
    'backend',
    'cable_name',
    'cluster_id',
    'hostname',
    'nat_enabled',
    'private_ip',
    'public_ip',
    'subnets',
  ]);
  const read = readGateway(gw);
  assert.deepEqual(read.gateway, { node: 'cluster-a-gw', haStatus: 'active', summary: 'All connections (1) are established' });
  assert.deepEqual(read.connections, [
    {
      gateway: 'gw-b',
      cluster: 'cluster-b',
      remoteIP: '172.16.9.1',
      nat: 'no',
      cableDriver: 'strait-psk',
      subnets: [],
      status: 'connected',
      reason: '',
      statusMessage: '',
      loss: '',
      rttAvg: '1ms',
    },
  ]);
  // a passive mark says why in statusFailure (Submariner's CRD has no summary), and subctl shows that
  assert.equal(await markGatewayPassive(a, { node: 'cluster-a-gw', clusterId: 'cluster-a', summary: 'Lost the lease to gw-2 (expired): not reachable' }), true);
  const marked = (await a.get(K.Gateway, 'cluster-a-gw', 'submariner-operator'))!;
  assert.deepEqual(Object.keys(marked.status as object).sort(), ['connections', 'haStatus', 'localEndpoint', 'statusFailure', 'version']);
  assert.equal(readGateway(marked).gateway.summary, 'Lost the lease to gw-2 (expired): not reachable');
});

test("the active gateway keeps the Submariner resource's status.gateways equal to the Gateway records (Submariner's shape)", async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const info = await deployBroker(broker, { brokerURL: 'file:///nowhere', cluster: 'cluster-a' });
  await joinCluster({
    broker,
    local: a,
    info,
    source: 'b',
    network: { clusterId: 'cluster-a', networkPlugin: 'generic', clusterCIDRs: ['10.1.0.0/16'], serviceCIDRs: ['100.1.0.0/16'] },
  });
  const sub = (await a.get(K.Submariner, 'submariner', 'submariner-operator'))!;
  assert.equal((sub.spec as Record<string, unknown>)['clusterID'], 'cluster-a');
  assert.deepEqual((sub.status as Record<string, unknown>)['gateways'], []);
  await publishGatewayRecords(a, undefined, recs('cluster-a', 1, 'connected'), '0.1.0', 'submariner-operator', 'submariner');
  const r2 = recs('cluster-a', 1, 'connected');
  const passive = {
    endpoint: { ...r2.endpoint, hostname: 'gw-2', endpointIP: '172.16.1.2' },
    gateway: { node: 'gw-2', haStatus: 'passive', summary: 'There are no connections' },
    connections: [],
  };
  await publishGatewayRecords(a, undefined, passive, '0.1.0', 'submariner-operator', 'submariner');
  // the passive one does not write the list; the active one's next tick has both
  await publishGatewayRecords(a, undefined, recs('cluster-a', 1, 'connected'), '0.1.0', 'submariner-operator', 'submariner');
  const status = (await a.get(K.Submariner, 'submariner', 'submariner-operator'))!.status as Record<string, unknown>;
  const gws = status['gateways'] as { haStatus: string; statusFailure: string; localEndpoint: { hostname: string } }[];
  assert.deepEqual(
    gws.map((g) => [g.localEndpoint.hostname, g.haStatus, g.statusFailure]),
    [
      ['cluster-a-gw', 'active', ''],
      ['gw-2', 'passive', ''],
    ],
  );
  assert.equal(status['clusterID'], 'cluster-a');
  assert.equal(status['networkPlugin'], 'generic');
});

test('HA: the publisher\'s stop() settles only after the tick in flight has written, so a later "released" mark is the last word', async () => {
  const a = newTestStore();
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let fetched = false;
  // the tick reads the record while active, then is slow to write it
  const p = startRecordsPublisher({
    local: a,
    intervalMs: 60_000,
    fetchRecords: async () => {
      fetched = true;
      await gate;
      return recs('cluster-a', 1, 'connected');
    },
  });
  while (!fetched) await new Promise((r) => setTimeout(r, 1));
  let settled = false;
  const stopping = p.stop().then(() => {
    settled = true;
  });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(settled, false, 'stop() waits for the tick in flight');
  release();
  await stopping;
  assert.equal(readGateway((await a.get(K.Gateway, 'cluster-a-gw', 'submariner-operator'))!).gateway.haStatus, 'active');
  // the mark after stop() is not overwritten by that tick
  assert.equal(await markGatewayPassive(a, { node: 'cluster-a-gw', clusterId: 'cluster-a', summary: 'Released the lease (stopped)' }), true);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(readGateway((await a.get(K.Gateway, 'cluster-a-gw', 'submariner-operator'))!).gateway.summary, 'Released the lease (stopped)');
});

test('a link that stops losing probes is published at once: the steady key tells no loss from some, and loss in 10 % steps', async () => {
  const withLoss = (loss: string): GatewayRecords => {
    const r = recs('cluster-a', 1, 'connected');
    r.connections[0] = { ...r.connections[0]!, loss };
    return r;
  };
  // a stored "4%" would otherwise outlive the loss (4 % and 0 % both round to step 0)
  assert.notEqual(steadyRecordsKey(withLoss('4%')), steadyRecordsKey(withLoss('0%')));
  assert.notEqual(steadyRecordsKey(withLoss('0.5%')), steadyRecordsKey(withLoss('0%')));
  assert.equal(steadyRecordsKey(withLoss('21%')), steadyRecordsKey(withLoss('24%')));
  assert.notEqual(steadyRecordsKey(withLoss('24%')), steadyRecordsKey(withLoss('36%')));
});

test("the publisher hands the broker's Endpoint records to onBrokerEndpoints after its list and on each change (the gateway follows a peer cluster's active gateway from them)", async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  await publishGatewayRecords(b, broker, recs('cluster-b', 2, 'connected'));
  const seen: { cluster: string; publicIP: string }[][] = [];
  const p = startRecordsPublisher({
    local: a,
    broker,
    intervalMs: 60_000,
    fetchRecords: () => Promise.resolve(recs('cluster-a', 1, 'connected')),
    onBrokerEndpoints: (rows) => seen.push(rows.map((r) => ({ cluster: r.cluster, publicIP: r.publicIP }))),
  });
  const until = async (what: string, fn: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !fn(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(fn(), `${what}: ${JSON.stringify(seen)}`);
  };
  try {
    await until("cluster-b's Endpoint from the list", () => seen.some((rows) => rows.some((r) => r.cluster === 'cluster-b' && r.publicIP === '198.51.100.2')));
    // cluster-b's active gateway moves (HA): its Endpoint names the other address
    const moved = recs('cluster-b', 7, 'connected');
    await publishGatewayRecords(b, broker, { ...moved, endpoint: { ...moved.endpoint, clusterId: 'cluster-b' } });
    await until('the moved Endpoint from the watch', () => seen.at(-1)?.some((r) => r.cluster === 'cluster-b' && r.publicIP === '198.51.100.7') === true);
  } finally {
    await p.stop();
  }
});
