// The world's plan (docs/world.md) is deterministic and gives every pod an address from its node's slice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cidrContains, ipv4ToInt, parseCidr } from '../../src/base/config/index.js';
import { buildPlan, clusterObjects, DEFAULT_WORLD, parseWorld, serviceViews } from '../../src/world/supervisor/index.js';

const plan = buildPlan(parseWorld(DEFAULT_WORLD));

test('plan: default world addresses (golden)', () => {
  const a = plan.clusters[0];
  assert.ok(a);
  assert.deepEqual(
    a.nodes.map((n) => [n.name, n.netns, n.underlayIP, n.podCIDR, n.bridgeIP, n.publicIP ?? '-']),
    [
      ['gateway', 'cluster-a.gateway', '172.18.0.2', '10.1.0.0/24', '10.1.0.1', '198.18.1.1'],
      ['worker', 'cluster-a.worker', '172.18.0.3', '10.1.1.0/24', '10.1.1.1', '-'],
    ],
  );
  assert.equal(a.dnsIP, '100.1.0.10');
  assert.equal(a.rootIP, '172.18.0.1');
  assert.deepEqual(
    a.services.map((s) => [s.namespace, s.name, s.clusterIP]),
    [
      ['kube-system', 'kube-dns', '100.1.0.10'],
      ['default', 'echo', '100.1.0.11'],
      ['mesh', 'echo', '100.1.0.12'],
    ],
  );
  const client = a.pods.find((p) => p.name === 'client');
  assert.deepEqual([client?.node, client?.ip, client?.netns], ['worker', '10.1.1.2', 'cluster-a.default.client']);
  const echo = a.pods.find((p) => p.deployment === 'echo');
  assert.equal(echo?.node, 'gateway', 'unpinned pods go to the least-loaded node');
  assert.match(echo?.name ?? '', /^echo-[b-z2-9]{10}-[b-z2-9]{5}$/);
  assert.equal(plan.clusters[1]?.nodes[0]?.publicIP, '198.18.2.1');
});

test('plan: same world, same names', () => {
  assert.deepEqual(buildPlan(parseWorld(DEFAULT_WORLD)), plan);
});

test('plan: every pod IP is inside its node slice and its cluster CIDR; interface names fit 15 bytes', () => {
  const big = buildPlan(
    parseWorld({
      clusters: [
        {
          name: 'big',
          clusterCIDR: '10.9.0.0/16',
          serviceCIDR: '100.9.0.0/16',
          nodes: [
            { name: 'gw', role: 'gateway' },
            { name: 'gw2', role: 'gateway' },
            ...Array.from({ length: 6 }, (_, i) => ({ name: `w${i}`, role: 'worker' })),
          ],
          workloads: [
            {
              namespace: 'default',
              deployments: [{ name: 'echo', image: 'strait/echo', replicas: 20 }],
              services: [{ name: 'echo', ports: [{ port: 80, targetPort: 8080 }] }],
            },
          ],
        },
      ],
    }),
  );
  const c = big.clusters[0];
  assert.ok(c);
  const seen = new Set<string>();
  for (const p of c.pods) {
    const node = c.nodes.find((n) => n.name === p.node);
    assert.ok(node && cidrContains(parseCidr(node.podCIDR), ipv4ToInt(p.ip) as number), `${p.ip} in ${node?.podCIDR}`);
    assert.ok(cidrContains(parseCidr(c.clusterCIDR), ipv4ToInt(p.ip) as number));
    assert.ok(!seen.has(p.ip));
    seen.add(p.ip);
    assert.ok(p.hostVeth.length <= 15);
  }
  for (const n of c.nodes) assert.ok(n.rootVeth.length <= 15 && (n.internetVeth ?? '').length <= 15);
  const perNode = c.nodes.map((n) => c.pods.filter((p) => p.node === n.name).length);
  assert.ok(Math.max(...perNode) - Math.min(...perNode) <= 1, `spread ${perNode}`);
  assert.deepEqual(
    c.nodes.filter((n) => n.publicIP).map((n) => n.publicIP),
    ['198.18.1.1', '198.18.1.2'],
  );
});

test('plan -> objects -> views: EndpointSlices select the echo pod; kube-dns points at the world DNS server', () => {
  const a = plan.clusters[0];
  assert.ok(a);
  const objs = clusterObjects(a, '2026-01-01T00:00:00Z');
  const kinds = objs.map((o) => o.kind);
  for (const k of ['Namespace', 'Node', 'Pod', 'Service', 'Deployment', 'EndpointSlice']) assert.ok(kinds.includes(k), k);
  const pod = objs.find((o) => o.kind === 'Pod' && o.metadata.name === 'client');
  assert.deepEqual(pod?.status as { podIP: string; phase: string }, { ...(pod?.status as object), podIP: '10.1.1.2', phase: 'Running' });
  const views = serviceViews(
    objs.filter((o) => o.kind === 'Service'),
    objs.filter((o) => o.kind === 'EndpointSlice'),
  );
  const echoPod = a.pods.find((p) => p.deployment === 'echo');
  assert.deepEqual(
    views.proxy.find((s) => s.name === 'echo'),
    {
      namespace: 'default',
      name: 'echo',
      clusterIP: '100.1.0.11',
      ports: [{ protocol: 'TCP', port: 8080, endpoints: [{ ip: echoPod?.ip, port: 8080 }] }],
    },
  );
  assert.deepEqual(
    views.proxy.find((s) => s.name === 'kube-dns')?.ports.map((p) => [p.protocol, p.endpoints]),
    [
      ['UDP', [{ ip: '172.18.0.1', port: 53 }]],
      ['TCP', [{ ip: '172.18.0.1', port: 53 }]],
    ],
  );
  assert.deepEqual(
    views.dns.find((s) => s.name === 'echo'),
    { namespace: 'default', name: 'echo', clusterIP: '100.1.0.11', endpointIPs: [echoPod?.ip] },
  );
});
