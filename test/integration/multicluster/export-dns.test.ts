// Export in cluster-b, resolve in cluster-a (docs/multicluster.md), without the network world:
// the export controllers sync through the broker, cluster-a's zone follows its store, and the
// real `dig` sees cluster-b's ClusterIP within 1 s; after unexport the name is NXDOMAIN.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ClustersetZone, startClustersetDns, ZoneSource } from '../../../src/multicluster/control/clusterset-dns/index.js';
import { MC_KINDS as K, MulticlusterAgent, verifyCluster } from '../../../src/multicluster/control/clusterset/index.js';
import { udpResolver } from '../../../src/multicluster/cli/index.js';
import { newTestStore } from '../../support/stores.js';

const run = promisify(execFile);

async function until(what: string, fn: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await fn()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

test('export echo in cluster-b -> dig in cluster-a answers its ClusterIP within 1 s; unexport -> NXDOMAIN', async () => {
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  const agents = [new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker }), new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker })];
  agents.forEach((x) => x.start());
  const zone = new ClustersetZone('cluster-a');
  const source = new ZoneSource(a, zone);
  source.start();
  const dns = await startClustersetDns({ zone, port: 0 });
  const dig = async (name: string) => {
    const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(dns.port), '+time=1', '+tries=1', name]);
    return {
      status: /status: ([A-Z]+)/.exec(stdout)?.[1],
      answer: stdout
        .split('\n')
        .filter((l) => l && !l.startsWith(';'))
        .map((l) => l.split(/\s+/).pop()),
    };
  };
  try {
    await b.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo', namespace: 'default' },
      spec: { type: 'ClusterIP', clusterIP: '100.2.0.10', ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] },
    });
    assert.equal((await dig('echo.default.svc.clusterset.local')).status, 'NXDOMAIN');
    await b.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name: 'echo', namespace: 'default' } });
    const took = await until('the answer', async () => (await dig('echo.default.svc.clusterset.local')).answer[0] === '100.2.0.10', 1000);
    assert.ok(took < 1000);
    assert.deepEqual((await dig('cluster-b.echo.default.svc.clusterset.local')).answer, ['100.2.0.10']);
    const valid = ((await b.get(K.ServiceExport, 'echo', 'default'))?.status as { conditions: { type: string; status: string }[] }).conditions.find(
      (c) => c.type === 'Valid',
    );
    assert.equal(valid?.status, 'True');
    // strait verify's service-discovery checks pass against this DNS server (it walks the
    // ServiceImports, which are written just after the slices that make the name answer)
    await until('the ServiceImport', async () => (await a.get(K.ServiceImport, 'echo', 'default'))?.status !== undefined, 1000);
    const checks = await verifyCluster(a, 'cluster-a', udpResolver('127.0.0.1', dns.port));
    assert.deepEqual(
      checks.map((c) => [c.target, c.result]),
      [
        ['cluster-b.echo.default.svc.clusterset.local', 'pass'],
        ['echo.default.svc.clusterset.local', 'pass'],
      ],
    );
    // ... and fail against a server that does not know the name
    const wrong = await verifyCluster(a, 'cluster-a', async () => ({ rcode: 3, addresses: [] }));
    assert.ok(wrong.every((c) => c.result === 'fail'));
    await b.delete(K.ServiceExport, 'echo', 'default');
    await until('NXDOMAIN', async () => (await dig('echo.default.svc.clusterset.local')).status === 'NXDOMAIN', 1000);
  } finally {
    await dns.close();
    source.stop();
    for (const x of agents) await x.stop();
  }
});
