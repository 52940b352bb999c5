// Inbound mode resolution, one named case per rule of Istio's ComposePeerAuthentication.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveInbound, type PeerAuthentication } from '../../src/mesh/control/index.js';
import { pa } from './fixtures.js';

const ROOT = 'istio-system';
const W = { namespace: 'mesh', labels: { app: 'echo', version: 'v1' }, ports: [8080, 9090] };

const cases: { name: string; policies: PeerAuthentication[]; mode: string; ports?: Record<number, string>; decidedBy?: string; workload?: typeof W }[] = [
  { name: 'nothing at all is PERMISSIVE', policies: [], mode: 'PERMISSIVE' },
  { name: 'namespace-wide STRICT applies', policies: [pa('mesh', 'default', 'STRICT')], mode: 'STRICT', decidedBy: 'mesh/default' },
  { name: 'root namespace policy is mesh-wide', policies: [pa(ROOT, 'default', 'STRICT')], mode: 'STRICT', decidedBy: `${ROOT}/default` },
  {
    name: 'namespace wins over root namespace',
    policies: [pa(ROOT, 'default', 'STRICT'), pa('mesh', 'default', 'DISABLE')],
    mode: 'DISABLE',
    decidedBy: 'mesh/default',
  },
  { name: 'UNSET namespace policy inherits the mesh mode', policies: [pa(ROOT, 'default', 'STRICT'), pa('mesh', 'default', 'UNSET')], mode: 'STRICT' },
  { name: 'a policy without mtls is UNSET', policies: [pa(ROOT, 'default', 'DISABLE'), pa('mesh', 'default', undefined)], mode: 'DISABLE' },
  {
    name: 'workload selector wins over namespace',
    policies: [pa('mesh', 'default', 'STRICT'), pa('mesh', 'echo', 'DISABLE', { selector: { app: 'echo' } })],
    mode: 'DISABLE',
    decidedBy: 'mesh/echo',
  },
  {
    name: 'a selector that does not match is ignored',
    policies: [pa('mesh', 'default', 'STRICT'), pa('mesh', 'other', 'DISABLE', { selector: { app: 'other' } })],
    mode: 'STRICT',
  },
  { name: 'selector must be a subset of the labels', policies: [pa('mesh', 'x', 'DISABLE', { selector: { app: 'echo', version: 'v2' } })], mode: 'PERMISSIVE' },
  {
    name: 'UNSET workload policy inherits the namespace mode',
    policies: [pa('mesh', 'default', 'STRICT'), pa('mesh', 'echo', 'UNSET', { selector: { app: 'echo' } })],
    mode: 'STRICT',
  },
  {
    name: 'oldest namespace-wide policy wins',
    policies: [pa('mesh', 'newer', 'DISABLE', { t: 20 }), pa('mesh', 'older', 'STRICT', { t: 10 })],
    mode: 'STRICT',
    decidedBy: 'mesh/older',
  },
  {
    name: 'same age: namespace/name order decides',
    policies: [pa('mesh', 'b', 'DISABLE', { t: 5 }), pa('mesh', 'a', 'STRICT', { t: 5 })],
    mode: 'STRICT',
    decidedBy: 'mesh/a',
  },
  {
    name: 'oldest workload policy wins',
    policies: [pa('mesh', 'w2', 'STRICT', { t: 31, selector: { app: 'echo' } }), pa('mesh', 'w1', 'DISABLE', { t: 30, selector: { version: 'v1' } })],
    mode: 'DISABLE',
    decidedBy: 'mesh/w1',
  },
  { name: 'oldest mesh-wide policy wins', policies: [pa(ROOT, 'm2', 'STRICT', { t: 41 }), pa(ROOT, 'm1', 'DISABLE', { t: 40 })], mode: 'DISABLE' },
  { name: 'a selector policy in the root namespace is ignored', policies: [pa(ROOT, 'sel', 'STRICT', { selector: { app: 'echo' } })], mode: 'PERMISSIVE' },
  { name: 'policies of other namespaces do not apply', policies: [pa('other', 'default', 'STRICT')], mode: 'PERMISSIVE' },
  { name: 'empty matchLabels is namespace-wide', policies: [pa('mesh', 'empty', 'STRICT', { selector: {} })], mode: 'STRICT' },
  {
    name: 'portLevelMtls sets one workload port',
    policies: [pa('mesh', 'echo', 'STRICT', { selector: { app: 'echo' }, ports: { 9090: 'DISABLE' } })],
    mode: 'STRICT',
    ports: { 8080: 'STRICT', 9090: 'DISABLE' },
  },
  {
    name: 'an UNSET port inherits the workload mode',
    policies: [pa('mesh', 'default', 'DISABLE'), pa('mesh', 'echo', 'STRICT', { selector: { app: 'echo' }, ports: { 9090: 'UNSET' } })],
    mode: 'STRICT',
    ports: { 8080: 'STRICT', 9090: 'STRICT' },
  },
  {
    name: 'an UNSET port of an UNSET workload policy inherits the namespace',
    policies: [pa('mesh', 'default', 'DISABLE'), pa('mesh', 'echo', 'UNSET', { selector: { app: 'echo' }, ports: { 9090: 'STRICT' } })],
    mode: 'DISABLE',
    ports: { 8080: 'DISABLE', 9090: 'STRICT' },
  },
  {
    name: 'portLevelMtls of a namespace-wide policy is ignored',
    policies: [pa('mesh', 'default', 'STRICT', { ports: { 9090: 'DISABLE' } })],
    mode: 'STRICT',
    ports: { 8080: 'STRICT', 9090: 'STRICT' },
  },
  {
    name: 'a port only named in portLevelMtls is reported too',
    policies: [pa('mesh', 'echo', 'PERMISSIVE', { selector: { app: 'echo' }, ports: { 7070: 'STRICT' } })],
    mode: 'PERMISSIVE',
    ports: { 7070: 'STRICT', 8080: 'PERMISSIVE' },
  },
  {
    name: 'a workload in the root namespace takes the root policy once',
    policies: [pa(ROOT, 'default', 'STRICT')],
    mode: 'STRICT',
    workload: { ...W, namespace: ROOT },
  },
];

for (const c of cases) {
  test(`PeerAuthentication: ${c.name}`, () => {
    const r = resolveInbound(c.workload ?? W, c.policies, ROOT);
    assert.equal(r.mode, c.mode);
    if (c.ports) for (const [p, m] of Object.entries(c.ports)) assert.equal(r.ports.find((x) => x.port === Number(p))?.mode, m, `port ${p}`);
    if (c.decidedBy) {
      const last = r.sources.at(-1);
      assert.equal(`${last?.namespace}/${last?.name}`, c.decidedBy);
    }
  });
}

test('PeerAuthentication: a shadowed policy is reported', () => {
  const r = resolveInbound(W, [pa('mesh', 'older', 'STRICT', { t: 1 }), pa('mesh', 'newer', 'DISABLE', { t: 2 })], ROOT);
  assert.deepEqual(
    r.shadowed.map((s) => s.name),
    ['newer'],
  );
});
