import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  connectedClusters, MC_KINDS as K, publishGatewayRecords, readEndpoint, readGateway, type GatewayRecords,
} from '../../../src/control/multicluster/index.js';
import { newTestStore } from '../../support/stores.js';

const recs = (cluster: string, n: number, status: string): GatewayRecords => ({
  endpoint: { clusterId: cluster, hostname: `${cluster}-gw`, endpointIP: `172.16.${n}.1`, publicIP: `198.51.100.${n}`, cableDriver: 'strait-psk', subnets: [`10.${n}.0.0/16`] },
  gateway: { node: `${cluster}-gw`, haStatus: 'active', summary: 'x' },
  connections: [{ gateway: `${cluster}-gw`, cluster: cluster === 'cluster-a' ? 'cluster-b' : 'cluster-a', remoteIP: '172.16.9.1', nat: 'no', cableDriver: 'strait-psk', subnets: [], status, rttAvg: '1ms' }],
});

test('gateway records land as Endpoint and Gateway objects; remote endpoints are copied from the broker', async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  await publishGatewayRecords(b, broker, recs('cluster-b', 2, 'connected'), '0.1.0');
  await publishGatewayRecords(a, broker, recs('cluster-a', 1, 'connecting'), '0.1.0');
  const eps = (await a.list(K.Endpoint, {})).items.map((e) => readEndpoint(e, 'cluster-a'));
  assert.deepEqual(eps.map((e) => [e.cluster, e.type, e.endpointIP]).sort(), [['cluster-a', 'local', '172.16.1.1'], ['cluster-b', 'remote', '172.16.2.1']]);
  const gws = (await a.list(K.Gateway, {})).items;
  assert.equal(readGateway(gws[0]!).connections[0]!.status, 'connecting');
  assert.deepEqual([...connectedClusters(gws, 'cluster-a')!], ['cluster-a']);
  // the connection comes up: DNS health follows the record
  await publishGatewayRecords(a, broker, recs('cluster-a', 1, 'connected'));
  assert.deepEqual([...connectedClusters((await a.list(K.Gateway, {})).items, 'cluster-a')!].sort(), ['cluster-a', 'cluster-b']);
  assert.equal(connectedClusters([], 'cluster-a'), undefined);
});
