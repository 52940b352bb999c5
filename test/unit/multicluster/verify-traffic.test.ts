// strait verify's pod-traffic checks fail where they should (docs/multicluster.md): a source address
// that is not the client pod's (SNAT on the way), a service that never answers, an export
// that never becomes Valid; and clean up their throw-away Service either way. The passing
// path runs in the default world (test/integration/multicluster/world-acceptance.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verifyTraffic, type TrafficOptions } from '../../../src/cli/verify-traffic.js';
import type { WorldRecord } from '../../../src/cli/world-file.js';
import { MC_KINDS as K } from '../../../src/multicluster/control/clusterset/index.js';
import { newTestStore } from '../../support/stores.js';

const pod = (cluster: string, name: string, image: string, ip: string) => ({
  namespace: 'default',
  name,
  node: 'worker',
  netns: `${cluster}.default.${name}`,
  ip,
  image,
});
const rec = {
  clusters: [
    { name: 'cluster-a', pods: [pod('cluster-a', 'client', 'strait/idle', '10.1.1.2'), pod('cluster-a', 'echo-a', 'strait/echo', '10.1.0.2')] },
    { name: 'cluster-b', pods: [pod('cluster-b', 'client', 'strait/idle', '10.2.1.2'), pod('cluster-b', 'echo-b', 'strait/echo', '10.2.0.2')] },
  ],
} as unknown as WorldRecord;

async function stores() {
  const m = new Map([
    ['cluster-a', newTestStore()],
    ['cluster-b', newTestStore()],
  ]);
  for (const [c, s] of m) {
    const x = c.slice(-1) === 'a' ? 1 : 2;
    await s.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `echo-${c.slice(-1)}`, namespace: 'default', labels: { app: 'echo' } },
      spec: { containers: [{ name: 'echo', image: 'strait/echo', ports: [{ containerPort: 8080 }] }] },
    });
    await s.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'echo', namespace: 'default' },
      spec: { clusterIP: `100.${x}.0.11`, selector: { app: 'echo' }, ports: [{ name: 'http', port: 8080, targetPort: 8080 }] },
    });
  }
  // a ClusterIP for the throw-away service, as the world's cluster sync would give it
  const b = m.get('cluster-b')!;
  b.watch(K.Service, { namespace: 'default' }, (ev) => {
    if (ev.type === 'ADDED' && ev.object.metadata.name.startsWith('strait-verify-')) {
      void b.update({ ...ev.object, spec: { ...(ev.object.spec as object), clusterIP: '100.2.0.12' } });
    }
  });
  return m;
}

test('verify fails on a rewritten source address, a missing gateway connection, and a discovery that never answers', async () => {
  const m = await stores();
  const opts: TrafficOptions = {
    rec,
    from: 'cluster-a',
    to: 'cluster-b',
    only: ['connectivity', 'service-discovery'],
    timeoutMs: 300,
    store: (c) => m.get(c)!,
    exec: async (netns, cmd) => {
      if (cmd[0] === 'curl') return { code: 0, stdout: `${JSON.stringify({ remoteAddress: '172.16.2.1' })}\n200`, stderr: '' };
      return { code: 0, stdout: ';; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN, id: 1\n', stderr: '' };
    },
  };
  const checks = await verifyTraffic(opts);
  const result = (name: RegExp) => checks.filter((c) => name.test(c.name)).map((c) => c.result);
  assert.deepEqual(result(/^gateway connection$/), ['FAIL', 'FAIL']);
  assert.deepEqual(result(/^pod to pod/), ['FAIL', 'FAIL']);
  assert.match(checks.find((c) => c.name.startsWith('pod to pod'))!.detail, /source seen 172\.16\.2\.1, expected the client pod 10\.1\.1\.2/);
  assert.deepEqual(result(/^pod to service/), ['FAIL', 'FAIL']);
  assert.deepEqual(result(/gets a ClusterIP/), ['PASS']);
  assert.deepEqual(result(/Valid=True/), ['FAIL']); // no agent runs here: it stays without a condition
  assert.deepEqual(result(/^dig /), ['FAIL', 'FAIL']);
  assert.deepEqual(result(/^unexport/), ['PASS']);
  // nothing left behind
  assert.deepEqual(
    (await m.get('cluster-b')!.list(K.Service, { namespace: 'default' })).items.map((s) => s.metadata.name),
    ['echo'],
  );
  assert.equal((await m.get('cluster-b')!.list(K.ServiceExport, {})).items.length, 0);
});

test('verify names what is missing when a cluster has no pods to verify with', async () => {
  const m = await stores();
  const checks = await verifyTraffic({
    rec,
    from: 'cluster-a',
    to: 'cluster-z',
    only: ['connectivity'],
    store: (c) => m.get(c) ?? newTestStore(),
    exec: async () => ({ code: 1, stdout: '', stderr: '' }),
  });
  assert.equal(checks.length, 1);
  assert.equal(checks[0]!.result, 'FAIL');
  assert.match(checks[0]!.detail, /"cluster-z" is not in the running world/);
});
