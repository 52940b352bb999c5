// Attack regressions for broker-info.subm (docs/multicluster.md): a forged file (own token, own PSK, a
// correct MAC for that token) parses, but the join refuses it because the broker knows the
// fingerprints of its real token and PSK; an old file replayed after a redeploy is refused too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraitError } from '../../src/base/errors/index.js';
import {
  deployBroker,
  encodeBrokerInfo,
  generatePsk,
  joinCluster,
  listJoinedClusters,
  parseBrokerInfo,
  type ClusterNetwork,
} from '../../src/multicluster/control/clusterset/index.js';
import { newTestStore } from '../support/stores.js';

const net: ClusterNetwork = { clusterId: 'evil', networkPlugin: 'strait', clusterCIDRs: ['10.66.0.0/16'], serviceCIDRs: ['100.66.0.0/16'] };

test('a forged broker-info file with a self-made token and PSK is refused at join', async () => {
  const broker = newTestStore();
  try {
    const real = await deployBroker(broker, { brokerURL: 'unix:///tmp/x.sock#broker', cluster: 'cluster-a' });
    const forged = parseBrokerInfo(encodeBrokerInfo({ ...real, clientToken: 'attacker-token-0123456789', ipsecPSK: generatePsk() }));
    await assert.rejects(
      joinCluster({ broker, local: newTestStore(), info: forged, source: 'forged.subm', network: net }),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_BROKER_INFO_STALE') && /access token/.test((err as Error).message),
    );
    // the real token with a PSK of the attacker's choosing: the MAC cannot be made without the
    // token, and with it the PSK fingerprint still does not match
    const swapped = parseBrokerInfo(encodeBrokerInfo({ ...real, ipsecPSK: generatePsk() }));
    await assert.rejects(
      joinCluster({ broker, local: newTestStore(), info: swapped, source: 'swapped.subm', network: net }),
      (err: unknown) => isStraitError(err, 'STRAIT_ERR_MC_BROKER_INFO_STALE') && /PSK/.test((err as Error).message),
    );
    assert.deepEqual(await listJoinedClusters(broker), []);
  } finally {
    await broker.close();
  }
});

test('an old broker-info file replayed after a redeploy is refused', async () => {
  const broker = newTestStore();
  try {
    const old = await deployBroker(broker, { brokerURL: 'unix:///tmp/x.sock#broker', cluster: 'cluster-a', token: 'shared-world-token-0123' });
    await deployBroker(broker, { brokerURL: 'unix:///tmp/x.sock#broker', cluster: 'cluster-a', token: 'shared-world-token-0123' });
    await assert.rejects(joinCluster({ broker, local: newTestStore(), info: old, source: 'old.subm', network: net }), (err: unknown) =>
      isStraitError(err, 'STRAIT_ERR_MC_BROKER_INFO_STALE'),
    );
  } finally {
    await broker.close();
  }
});
