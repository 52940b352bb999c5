// The multicluster control daemon: controllers + clusterset DNS + /metrics in one process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { isStraitError } from '../../../src/base/errors/index.js';
import { silentLogger } from '../../../src/base/log/index.js';
import { MC_KINDS as K, MulticlusterAgent } from '../../../src/multicluster/control/clusterset/index.js';
import { runMulticlusterDaemon } from '../../../src/multicluster/control/run/index.js';
import { newTestStore } from '../../support/stores.js';

const run = promisify(execFile);

test('the daemon answers clusterset names for exports of other clusters and serves metrics promtool accepts', async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  const d = await runMulticlusterDaemon(
    {
      clusterId: 'cluster-a',
      store: { socket: '/nonexistent', tokenFile: '/nonexistent' },
      dns: { port: 0 },
      metrics: { port: 0 },
    },
    { local: a, broker, log: silentLogger() },
  );
  const agentB = new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker });
  agentB.start();
  try {
    await b.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo', namespace: 'default' },
      spec: { clusterIP: '100.2.0.10', ports: [{ name: 'http', port: 8080 }] },
    });
    await b.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name: 'echo', namespace: 'default' } });
    let answer = '';
    for (let i = 0; i < 50 && answer !== '100.2.0.10'; i++) {
      answer = (await run('dig', ['@127.0.0.1', '-p', String(d.dns!.port), '+short', 'echo.default.svc.clusterset.local'])).stdout.trim();
      if (answer !== '100.2.0.10') await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(answer, '100.2.0.10');
    const text = await (await fetch(`http://127.0.0.1:${d.metricsPort}/metrics`)).text();
    assert.match(text, /strait_dns_queries_total\{qtype="A",rcode="NOERROR"\} [1-9]/);
    assert.match(text, /strait_mc_broker_sync_duration_seconds_bucket/);
    const child = execFile('promtool', ['check', 'metrics']);
    child.stdin!.end(text);
    assert.equal(await new Promise<number>((r) => child.on('exit', (c) => r(c ?? 1))), 0);
  } finally {
    await agentB.stop();
    await d.stop();
  }
});

test('the daemon refuses an unknown configuration key with a coded error', async () => {
  await assert.rejects(
    runMulticlusterDaemon({ clusterId: 'cluster-a', store: { socket: 's', tokenFile: 't' }, dnss: {} }),
    (err: unknown) => isStraitError(err, 'STRAIT_ERR_CONFIG_UNKNOWN_KEY') && /dnss/.test((err as Error).message),
  );
});
