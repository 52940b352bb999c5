// The mesh agent's side of observed traffic, over a real embedded store: sidecar reports added
// up into one MeshTrafficObservation per injected pod, clients named by pod and identity,
// strictWouldReset following the policy, bounded per pod, carried over an agent restart, and
// the object gone with its pod.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  buildMeshView,
  inboundOf,
  OBSERVATION_KIND,
  ObservationWriter,
  PodFlows,
  strictWouldReset,
  type MeshTrafficObservation,
  type Workload,
} from '../../src/mesh/control/index.js';
import type { FlowReport, FlowReportEntry } from '../../src/mesh/dataplane/proxy/index.js';
import { openEmbeddedStore, type KubeObject, type ResourceStore } from '../../src/platform/store/index.js';
import { pa, pod, smcp, smmr } from './fixtures.js';

let dir: string;
let store: ResourceStore;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'strait-mesh-obs-'));
  store = openEmbeddedStore({ dir: join(dir, 'store') });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const withNetns = (o: KubeObject): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, 'strait.dev/netns': `ns-${o.metadata.name}` } },
});
const base = [
  smcp('istio-system', {}),
  smmr('istio-system', ['mesh']),
  withNetns(pod('mesh', 'echo', { inject: 'annotation', ip: '10.1.0.5', port: 8080 })),
  withNetns(pod('mesh', 'client', { inject: 'annotation', ip: '10.1.0.7' })),
  pod('mesh', 'outsider', { ip: '10.1.0.9', sa: 'default' }),
];
const t0 = Date.UTC(2026, 0, 1, 10);
const entry = (e: Partial<FlowReportEntry>): FlowReportEntry => ({
  address: '10.1.0.9',
  port: 8080,
  tls: 'plaintext',
  outcome: 'accepted',
  mode: 'PERMISSIVE',
  count: 1,
  firstSeen: t0,
  lastSeen: t0,
  ...e,
});
const report = (flows: FlowReportEntry[], evicted = 0): FlowReport => ({ limit: 256, evicted, flows });
const get = async (name: string) => store.get<MeshTrafficObservation>(OBSERVATION_KIND, name, 'mesh');

test("reports become the pod's MeshTrafficObservation: mtls client by SPIFFE ID and pod, plaintext by pod address; STRICT would reset the plaintext one", async () => {
  const w = new ObservationWriter({ store });
  await w.start();
  const view = buildMeshView(base);
  w.update(view);
  await w.idle();
  const empty = await get('echo');
  assert.deepEqual(empty?.status?.flows, [], 'the object exists once the sidecar runs, with the inbound resolution');
  assert.equal(empty?.status?.inbound?.mode, 'PERMISSIVE');
  assert.equal(empty?.spec?.spiffeId, 'spiffe://cluster.local/ns/mesh/sa/echo');
  assert.ok(await get('client'));
  assert.equal(await get('outsider'), undefined, 'no sidecar, no observation');

  w.report(
    'mesh/echo',
    report([
      entry({ address: '10.1.0.7', identity: 'spiffe://cluster.local/ns/mesh/sa/client', tls: 'mtls', count: 3, lastSeen: t0 + 2000 }),
      entry({ count: 2, lastSeen: t0 + 1000 }),
    ]),
  );
  w.report('mesh/echo', report([entry({ count: 1, lastSeen: t0 + 3000 })]));
  await w.idle();
  const o = await get('echo');
  assert.deepEqual(
    o?.status?.flows.map((f) => [f.client, f.tls, f.outcome, f.count, f.lastSeen, f.strictWouldReset]),
    [
      [
        { address: '10.1.0.9', namespace: 'mesh', pod: 'outsider', serviceAccount: 'default', sidecar: false },
        'plaintext',
        'accepted',
        3,
        new Date(t0 + 3000).toISOString(),
        true,
      ],
      [
        {
          address: '10.1.0.7',
          identity: 'spiffe://cluster.local/ns/mesh/sa/client',
          namespace: 'mesh',
          pod: 'client',
          serviceAccount: 'client',
          sidecar: true,
        },
        'mtls',
        'accepted',
        3,
        new Date(t0 + 2000).toISOString(),
        false,
      ],
    ],
  );
  assert.deepEqual(o?.status?.summary, { flows: 2, mtls: 1, plaintext: 1, tlsPassthrough: 0, reset: 0, strictWouldReset: 1 });

  // STRICT in force: the accepted plaintext flow is no longer something STRICT "would" reset
  const strict = buildMeshView([...base, pa('mesh', 'default', 'STRICT')]);
  w.update(strict);
  w.report('mesh/echo', report([entry({ outcome: 'reset', reason: 'plaintext', mode: 'STRICT', lastSeen: t0 + 5000 })]));
  await w.idle();
  const s = await get('echo');
  assert.equal(s?.status?.inbound?.mode, 'STRICT');
  assert.deepEqual(
    s?.status?.flows.map((f) => [f.client.address, f.tls, f.outcome, f.reason, f.strictWouldReset]),
    [
      ['10.1.0.9', 'plaintext', 'reset', 'plaintext', false],
      ['10.1.0.9', 'plaintext', 'accepted', undefined, false],
      ['10.1.0.7', 'mtls', 'accepted', undefined, false],
    ],
  );
  assert.equal(s?.status?.summary.reset, 1);

  // an unchanged view writes nothing
  const writes = w.writes;
  w.update(strict);
  await w.idle();
  assert.equal(w.writes, writes);
  w.stop();

  // the agent restarts: the flows carry on from the stored object
  const again = new ObservationWriter({ store });
  await again.start();
  again.update(strict);
  again.report('mesh/echo', report([entry({ outcome: 'reset', reason: 'plaintext', mode: 'STRICT', lastSeen: t0 + 6000 })]));
  await again.idle();
  assert.equal((await get('echo'))?.status?.flows.find((f) => f.outcome === 'reset')?.count, 2);

  // the pod leaves the mesh: its observation goes
  again.update(buildMeshView([...base.filter((x) => x.metadata.name !== 'echo'), pa('mesh', 'default', 'STRICT')]));
  await again.idle();
  assert.equal(await get('echo'), undefined);
  again.report('mesh/echo', report([entry({})])); // a late report of the stopped sidecar
  await again.idle();
  assert.equal(await get('echo'), undefined);
  again.stop();
});

test("per pod at most flowLimit flows: the one seen longest ago goes, counted in evictedFlows with the sidecar's own evictions", () => {
  const p = new PodFlows(2);
  p.merge(report([entry({ address: '10.1.0.20', lastSeen: t0 + 1 }), entry({ address: '10.1.0.21', lastSeen: t0 + 2 })], 5));
  p.merge(report([entry({ address: '10.1.0.22', lastSeen: t0 + 3 })]));
  assert.deepEqual(
    [...p.flows.values()].map((f) => f.address),
    ['10.1.0.21', '10.1.0.22'],
  );
  assert.equal(p.evicted, 6);
});

test('malformed report entries are skipped, the good ones kept', () => {
  const p = new PodFlows(8);
  const r = p.merge({
    evicted: -1,
    flows: [
      entry({}),
      { ...entry({}), port: 70000 },
      { ...entry({}), tls: 'ssl' },
      { ...entry({}), count: 1.5 },
      'x',
      null,
      { ...entry({}), address: 'a'.repeat(600) },
    ],
  });
  assert.deepEqual(r, { merged: 1, skipped: 6 });
  assert.equal(p.evicted, 0);
  assert.deepEqual(p.merge('nonsense'), { merged: 0, skipped: 0 });
});

test('strictWouldReset, table: accepted plaintext or non-mesh TLS on a port that is not STRICT now, and nothing else', () => {
  // workload PERMISSIVE, port 8080 STRICT by a port-level setting
  const view = buildMeshView([...base, pa('mesh', 'echo-ports', 'PERMISSIVE', { selector: { app: 'echo' }, ports: { 8080: 'STRICT' } })]);
  const inbound = inboundOf(view, view.workloads.find((w) => w.name === 'echo') as Workload);
  const cases: [string, Parameters<typeof strictWouldReset>[1], boolean][] = [
    ['plaintext accepted on a PERMISSIVE port', { port: 9090, tls: 'plaintext', outcome: 'accepted' }, true],
    ['non-mesh TLS passed through on a PERMISSIVE port', { port: 9090, tls: 'tls-passthrough', outcome: 'accepted' }, true],
    ['mTLS', { port: 9090, tls: 'mtls', outcome: 'accepted' }, false],
    ['already reset', { port: 9090, tls: 'plaintext', outcome: 'reset' }, false],
    ['a refused handshake', { port: 9090, tls: 'tls', outcome: 'reset' }, false],
    ['plaintext accepted before the port turned STRICT', { port: 8080, tls: 'plaintext', outcome: 'accepted' }, false],
  ];
  for (const [name, flow, want] of cases) assert.equal(strictWouldReset(inbound, flow), want, name);
  assert.equal(strictWouldReset(undefined, { port: 9090, tls: 'plaintext', outcome: 'accepted' }), false, 'no sidecar: STRICT changes nothing');
});
