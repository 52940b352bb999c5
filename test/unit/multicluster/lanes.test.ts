// The multicluster agents' two lanes: follow-up work (the exporting cluster's status, the
// aggregate, its own import) waits until the imports on the path to other clusters' DNS
// answers have committed, by an explicit count rather than a number of loop turns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MC_KINDS as K, MulticlusterAgent, WorkLanes } from '../../../src/multicluster/control/clusterset/index.js';
import type { KubeObject } from '../../../src/platform/store/index.js';
import { newTestStore } from '../../support/stores.js';

const turn = () => new Promise<void>((r) => setImmediate(r));

test('afterForeground waits for every begin() to end, then QUIET_TURNS (2) loop turns', async () => {
  const lanes = new WorkLanes(10_000);
  const order: string[] = [];
  lanes.begin();
  lanes.begin();
  const follow = lanes.afterForeground().then(() => order.push('follow-up'));
  for (let i = 0; i < 5; i++) await turn();
  assert.equal(order.join(), '', 'nothing runs while foreground work is under way');
  lanes.end();
  for (let i = 0; i < 5; i++) await turn();
  assert.equal(order.join(), '', 'one of two foreground tasks is still under way');
  lanes.end();
  for (let i = 0; i < 10; i++) await Promise.resolve();
  assert.equal(order.join(), '', 'not in the same turn: the I/O that waited for the foreground work is served first');
  await turn();
  assert.equal(order.join(), '', 'nor in the next: a second poll phase for an in-process client');
  await follow;
  assert.deepEqual(order, ['follow-up']);
  assert.equal(lanes.foreground, 0);
});

test('afterForeground resolves at once (after a turn) with no foreground work, and after maxWaitMs at the latest', async () => {
  const idle = new WorkLanes(10_000);
  await idle.afterForeground();
  const busy = new WorkLanes(30);
  busy.begin();
  const t0 = performance.now();
  await busy.afterForeground();
  assert.ok(performance.now() - t0 >= 25, 'a stream of foreground work cannot starve follow-up work');
  busy.end();
});

test('export in cluster-b: cluster-a commits its import before cluster-b commits the export status', async () => {
  const lanes = new WorkLanes(10_000);
  const broker = newTestStore();
  const a = newTestStore();
  const b = newTestStore();
  const agents = [
    new MulticlusterAgent({ clusterId: 'cluster-a', local: a, broker, lanes }),
    new MulticlusterAgent({ clusterId: 'cluster-b', local: b, broker, lanes }),
  ];
  agents.forEach((x) => x.start());
  const order: string[] = [];
  const watches = [
    a.watch(K.EndpointSlice, { namespace: 'default' }, (ev) => order.push(`a ${ev.type} EndpointSlice ${ev.object.metadata.name}`)),
    b.watch(K.ServiceExport, { namespace: 'default' }, (ev) => {
      if (ev.object.status) order.push(`b status ServiceExport ${ev.object.metadata.name}`);
    }),
  ];
  try {
    for (const name of ['first', 'second']) {
      await b.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: 'default' },
        spec: { type: 'ClusterIP', clusterIP: '100.2.0.10', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      });
      await Promise.all(agents.map((x) => x.idle()));
      order.length = 0;
      await b.apply({ apiVersion: K.ServiceExport.apiVersion, kind: 'ServiceExport', metadata: { name, namespace: 'default' } } as KubeObject);
      for (let i = 0; i < 300 && !order.some((o) => o.startsWith('b status')); i++) await new Promise((r) => setTimeout(r, 10));
      await Promise.all(agents.map((x) => x.idle()));
      assert.equal(order[0], `a ADDED EndpointSlice ${name}.cluster-b`, `${name}: ${order.join('; ')}`);
      assert.ok(
        order.some((o) => o.startsWith('b status')),
        `${name}: ${order.join('; ')}`,
      );
      assert.equal(lanes.foreground, 0);
    }
  } finally {
    for (const w of watches) w.stop();
    for (const x of agents) await x.stop();
    await Promise.all([broker.close(), a.close(), b.close()]);
  }
});
